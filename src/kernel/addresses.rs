//! Device addresses in a kernel job (buffer references): which buffer an `@NAME` element names,
//! where the model places the addressed buffers when no device gave their addresses, and the
//! bytes with the addresses written in.

use crate::kernel::buffers::element_size;
use crate::kernel::run::{AddressPatch, KernelError, KernelJob, Place};
use crate::model::ScalarType;
use crate::spirv;

impl KernelJob {
    /// Where `target` (`1`, `0.2`, `0.2[1]`: a descriptor; else the name of an unbound buffer) is among the
    /// job's buffers.
    pub fn place_of(&self, target: &str) -> Result<Place, KernelError> {
        let binding = crate::kernel::buffers::descriptor_slot(target);
        if let Some((set, binding, element)) = binding {
            return self
                .buffers
                .iter()
                .position(|b| (b.set, b.binding, b.element) == (set, binding, element))
                .map(Place::Bound)
                .ok_or_else(|| {
                    KernelError::Input(format!(
                        "@{target}: no buffer is given for set {set} binding {binding}{}",
                        if element > 0 {
                            format!(" element {element}")
                        } else {
                            String::new()
                        }
                    ))
                });
        }
        self.unbound
            .iter()
            .position(|(n, _)| n == target)
            .map(Place::Unbound)
            .ok_or_else(|| {
                KernelError::Input(format!(
                    "@{target}: no buffer is named {target} (give one with --buffer {target}=SPEC)"
                ))
            })
    }

    /// Adds the address elements of a `values:` spec written into `into`.
    pub fn add_address_refs(
        &mut self,
        into: Place,
        dtype: ScalarType,
        refs: &[crate::kernel::AddressRef],
    ) -> Result<(), KernelError> {
        for r in refs {
            let of = self.place_of(&r.target)?;
            self.addresses.push(AddressPatch {
                into,
                at: r.element * element_size(dtype),
                of,
                plus: r.plus,
                width: r.width,
            });
        }
        Ok(())
    }

    /// Where the model puts the addressed buffers: the device's addresses when a device ran,
    /// else its own.
    pub(crate) fn addressing_bases(&self) -> Vec<(Place, u64)> {
        if let Some(b) = &self.device_bases {
            return b.clone();
        }
        let mut places = crate::words::address::addressed(&self.addresses);
        places.extend((0..self.unbound.len()).map(Place::Unbound));
        places.sort();
        places.dedup();
        let sizes: Vec<u64> = places
            .iter()
            .map(|p| match p {
                Place::Bound(i) => self.buffers[*i].host.bytes.len() as u64,
                Place::Unbound(i) => self.unbound[*i].1.bytes.len() as u64,
                Place::Push => 0,
            })
            .collect();
        places
            .into_iter()
            .zip(spirv::Addressing::model_bases(&sizes))
            .collect()
    }

    /// `bytes` (the contents of `into`) with the job's addresses written in, at `bases`.
    pub(crate) fn patched(
        &self,
        into: Place,
        bytes: &[u8],
        bases: &[(Place, u64)],
    ) -> Result<Vec<u8>, KernelError> {
        let mut b = bytes.to_vec();
        let base = |p: Place| bases.iter().find(|(q, _)| *q == p).map(|(_, a)| *a);
        crate::words::address::apply(&self.addresses, into, &mut b, &base)
            .map_err(KernelError::Input)?;
        Ok(b)
    }
}
