//! The library's calls for a downstream crate's tests ([`KernelJob::check`], and
//! [`KernelJob::check_on`] a device), and the samplers a job gives its kernel.

#[cfg(feature = "vulkan")]
use crate::kernel::run::probe_layout;
use crate::kernel::run::{binding_name, KernelError, KernelJob, Report, Tolerance};
use crate::model::SubgroupSize;
use crate::spirv::Kernel;

impl KernelJob {
    /// Runs the kernel on the model at subgroup size `size` and checks it: the library's one call
    /// for a downstream crate's tests (see the crate root). Every element of every buffer is
    /// [`Report::ok`] unless the model found something undefined, racy or order-dependent that
    /// reached a buffer (or a finding such as an out-of-bounds access).
    pub fn check(&self, size: u32) -> Result<Report, KernelError> {
        let size = SubgroupSize::new(size as u64).map_err(|e| KernelError::Input(e.to_string()))?;
        let model = self.run_model(size, None)?;
        Ok(self.compare(&model, None, Tolerance::default()))
    }

    /// Runs the kernel on Vulkan device `ctx` at its subgroup size, then on the model in the
    /// device's lane layout (probed) with the device's buffer addresses, and compares element by
    /// element: [`Report::ok`] when the device agrees with every value the model defines and
    /// nothing undefined reached a buffer.
    #[cfg(feature = "vulkan")]
    pub fn check_on(&mut self, ctx: &crate::vulkan::Context) -> Result<Report, KernelError> {
        let kernel = self.decode()?;
        let size = ctx.caps.subgroup_size;
        let p = probe_layout(ctx, kernel.local_size, size)?;
        self.layout = p.layout;
        self.placements = p.placements;
        let (bytes, bases) = self.run_device(ctx, &kernel, size)?;
        self.device_bases = Some(bases);
        let size = SubgroupSize::new(size as u64).map_err(|e| KernelError::Input(e.to_string()))?;
        let model = self.run_model_decoded(kernel, size, None)?;
        Ok(self.compare(&model, Some(&bytes), Tolerance::default()))
    }

    /// The sampler given for (`set`, `binding`).
    pub(crate) fn sampler_at(
        &self,
        set: u32,
        binding: u32,
    ) -> Option<crate::words::sampler::Sampler> {
        self.samplers
            .iter()
            .find(|(s, b, _)| (*s, *b) == (set, binding))
            .map(|x| x.2)
    }

    /// Every sampler the kernel declares is given one state, and every state given is for a
    /// sampler the kernel declares — in the command line's words. A job whose descriptors are
    /// given as the model binds them (an Amber script's) carries its samplers there, and the
    /// model's binding checks them in the script's words.
    pub(crate) fn check_samplers(&self, kernel: &Kernel) -> Result<(), KernelError> {
        if !self.descriptors.is_empty() {
            return Ok(());
        }
        for o in kernel.objects.iter().filter(|o| o.sampler) {
            let (set, binding) = o.binding.unwrap_or((0, 0));
            if self.sampler_at(set, binding).is_none() {
                return Err(KernelError::Input(format!(
                    "{} (set {set} binding {binding}) is {}: give its state with --sampler {}=linear,clamp_to_edge (or nearest, repeat, …)",
                    o.name,
                    if o.image.is_some() { "an image with its sampler" } else { "a sampler" },
                    binding_name(set, binding)
                )));
            }
        }
        for (set, binding, _) in &self.samplers {
            if !kernel
                .objects
                .iter()
                .any(|o| o.sampler && o.binding == Some((*set, *binding)))
            {
                return Err(KernelError::Input(format!(
                    "--sampler {}: the kernel declares no sampler at set {set} binding {binding}",
                    binding_name(*set, *binding)
                )));
            }
        }
        Ok(())
    }
}
