//! The conformance suite: the model and a Vulkan device compared lane by lane.

pub mod cases;
pub mod compare;
pub mod glsl;
pub mod known;
pub mod report;
pub mod run;
pub mod single;

#[cfg(test)]
mod tests {
    use super::glsl::*;
    use crate::model::SubgroupSize;

    #[test]
    fn every_generated_kernel_compiles() {
        for n in [8, 32] {
            let size = SubgroupSize::new(n).unwrap();
            for spec in KernelSpec::all(size) {
                let src = generate(&spec, None);
                if let Err(e) = crate::vulkan::compile_glsl(&src, &spec.name(), true) {
                    panic!("{e}");
                }
                for fault in [
                    Fault::WrongLane(1),
                    Fault::WrongIdentity,
                    Fault::OffByOneShuffle,
                    Fault::NoWrite(2),
                ] {
                    let src = generate(&spec, Some(fault));
                    if let Err(e) = crate::vulkan::compile_glsl(&src, &spec.name(), true) {
                        panic!("{fault:?}: {e}");
                    }
                }
            }
        }
    }
}
