//! One verdict policy (issue 18 §5): the same kernel through `lockstep run`'s comparison and
//! through an Amber script gets the same verdict for every element — defined and compared, or
//! undefined — for a divergent barrier, an out-of-bounds write, a race, and a clean kernel.
#![cfg(feature = "vulkan")]
use lockstep::amber::{engines::ModelBackend, parse, run_script, Status};
use lockstep::kernel::run::{KernelJob, Tolerance};
use lockstep::kernel::{compile, HostBuffer, SourceLang, SourceOptions};
use lockstep::model::SubgroupSize;

const N: usize = 8;

/// The kernel's verdict per element through `lockstep run`'s comparison: `true` = defined.
fn run_verdicts(src: &str) -> Vec<bool> {
    let module = compile(src, SourceLang::Glsl, &SourceOptions::default()).unwrap();
    let mut job = KernelJob::new(module);
    job.buffers.push((0, 0, HostBuffer::from_slice(&[0u32; N])));
    let model = job.run_model(SubgroupSize::new(4).unwrap(), None).unwrap();
    let r = &model.run;
    let out = &r.buffers[0];
    let report = job.compare(&model, None, Tolerance::default());
    let undefined_items: Vec<&String> = report
        .findings
        .iter()
        .filter(|f| f.buffer.is_some())
        .flat_map(|f| f.items.iter())
        .collect();
    (0..N)
        .map(|i| {
            let name = model.kernel.describe(out.object, (i * 4) as u64);
            !undefined_items.iter().any(|it| **it == name)
        })
        .collect()
}

/// The same through an Amber script with an EXPECT per element: `true` = not undefined.
fn amber_verdicts(src: &str) -> Vec<bool> {
    let mut text = format!(
        "#!amber\nSHADER compute k GLSL\n{src}END\nBUFFER b DATA_TYPE uint32 SIZE {N} FILL 0\nPIPELINE compute p\n  ATTACH k\n  BIND BUFFER b AS storage DESCRIPTOR_SET 0 BINDING 0\nEND\nRUN p 1 1 1\n"
    );
    for i in 0..N {
        text += &format!("EXPECT b IDX {} EQ 0\n", i * 4);
    }
    let script = parse(&text).unwrap();
    let mut model = ModelBackend::new(None, Some(SubgroupSize::new(4).unwrap()));
    let r = run_script(&script, &mut model);
    assert_eq!(r.expects.len(), N, "{r:?}");
    r.expects
        .iter()
        .map(|v| v.status != Status::Undefined)
        .collect()
}

#[test]
fn lockstep_run_and_amber_give_every_element_the_same_verdict() {
    let kernels = [
        // clean: every element defined
        "#version 450\nlayout(local_size_x = 8) in;\nlayout(binding = 0) buffer B { uint b[]; };\nvoid main() { b[gl_LocalInvocationID.x] = 0u; }\n",
        // a barrier half the invocations skip: nothing pinned down
        "#version 450\nlayout(local_size_x = 8) in;\nlayout(binding = 0) buffer B { uint b[]; };\nvoid main() { uint i = gl_LocalInvocationID.x; if (i < 4u) { barrier(); } b[i] = 0u; }\n",
        // a write past the end: nothing pinned down
        "#version 450\nlayout(local_size_x = 8) in;\nlayout(binding = 0) buffer B { uint b[]; };\nvoid main() { uint i = gl_LocalInvocationID.x; b[i] = 0u; if (i == 7u) { b[i + 100u] = 1u; } }\n",
        // a race on element 3 only
        "#version 450\nlayout(local_size_x = 8) in;\nlayout(binding = 0) buffer B { uint b[]; };\nvoid main() { uint i = gl_LocalInvocationID.x; if (i != 3u) { b[i] = 0u; } if (i >= 6u) { b[3] = i; } }\n",
    ];
    let expected = [
        vec![true; N],
        vec![false; N],
        vec![false; N],
        (0..N).map(|i| i != 3).collect::<Vec<bool>>(),
    ];
    for (k, want) in kernels.iter().zip(expected) {
        let a = run_verdicts(k);
        let b = amber_verdicts(k);
        assert_eq!(a, b, "{k}");
        assert_eq!(a, want, "{k}");
    }
}

/// SPIR-V 1.6, 3.3.20 OpControlBarrier: "When Execution is Workgroup or larger, behavior is
/// undefined unless all invocations within Execution execute the same dynamic instance of this
/// instruction." After such a barrier nothing the dispatch could write is pinned down: a memory
/// one descriptor may write is undefined through every descriptor that shows it — here a buffer
/// whose first half is bound writable (binding 0) and whole read-only (binding 1): the second
/// half, seen only read-only, is the same memory (the policy once went by descriptor, and left it
/// defined).
#[test]
fn a_divergent_barrier_leaves_memory_undefined_through_every_descriptor_that_shows_it() {
    let script = |barrier: &str| {
        let mut text = format!(
            "#!amber\nSHADER compute k GLSL\n#version 450\nlayout(local_size_x = 8) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\nlayout(binding = 1) readonly buffer R {{ uint r[]; }};\nvoid main() {{ uint i = gl_LocalInvocationID.x; {barrier} b[i] = r[i + {N}u] + 1u; }}\nEND\nBUFFER buf DATA_TYPE uint32 SIZE {} FILL 0\nPIPELINE compute p\n  ATTACH k\n  BIND BUFFER buf AS storage DESCRIPTOR_SET 0 BINDING 0 DESCRIPTOR_OFFSET 0 DESCRIPTOR_RANGE {}\n  BIND BUFFER buf AS storage DESCRIPTOR_SET 0 BINDING 1\nEND\nRUN p 1 1 1\n",
            2 * N,
            4 * N
        );
        for i in 0..2 * N {
            text += &format!("EXPECT buf IDX {} EQ {}\n", i * 4, u32::from(i < N));
        }
        let mut model = ModelBackend::new(None, Some(SubgroupSize::new(4).unwrap()));
        let r = run_script(&parse(&text).unwrap(), &mut model);
        assert_eq!(r.expects.len(), 2 * N, "{r:?}");
        r.expects.iter().map(|v| v.status).collect::<Vec<Status>>()
    };
    // Every invocation reaches the barrier: the first half 0 + 1, the second half untouched.
    assert_eq!(script("barrier();"), vec![Status::Pass; 2 * N]);
    // Half of them skip it: every element undefined, the read-only half included.
    assert_eq!(
        script("if (i < 4u) { barrier(); }"),
        vec![Status::Undefined; 2 * N]
    );
}
