//! One verdict policy (issue 18 §5): the same kernel through `lockstep run`'s comparison and
//! through an Amber script gets the same verdict for every element — defined and compared, or
//! undefined — for a divergent barrier, an out-of-bounds write, a race, and a clean kernel.
#![cfg(feature = "vulkan")]
use lockstep::amber::{engines::ModelBackend, parse, run_script, Status};
use lockstep::kernel::run::{FailPolicy, JobBuffer, KernelJob, Tolerance};
use lockstep::kernel::{compile, HostBuffer, SourceLang, SourceOptions};
use lockstep::model::SubgroupSize;

const N: usize = 8;

/// The kernel's verdict per element through `lockstep run`'s comparison: `true` = defined.
fn run_verdicts(src: &str) -> Vec<bool> {
    let module = compile(src, SourceLang::Glsl, &SourceOptions::default()).unwrap();
    let mut job = KernelJob::new(module);
    job.buffers
        .push(JobBuffer::new(0, 0, HostBuffer::from_slice(&[0u32; N])));
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
/// defined). A buffer only read-only descriptors show stays defined.
#[test]
fn a_divergent_barrier_leaves_memory_undefined_through_every_descriptor_that_shows_it() {
    let script = |barrier: &str| {
        let mut text = format!(
            "#!amber\nSHADER compute k GLSL\n#version 450\nlayout(local_size_x = 8) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\nlayout(binding = 1) readonly buffer R {{ uint r[]; }};\nlayout(binding = 2) readonly buffer Q {{ uint q[]; }};\nvoid main() {{ uint i = gl_LocalInvocationID.x; {barrier} b[i] = r[i + {N}u] + 1u + q[i] * 0u; }}\nEND\nBUFFER buf DATA_TYPE uint32 SIZE {} FILL 0\nBUFFER other DATA_TYPE uint32 SIZE {N} FILL 5\nPIPELINE compute p\n  ATTACH k\n  BIND BUFFER buf AS storage DESCRIPTOR_SET 0 BINDING 0 DESCRIPTOR_OFFSET 0 DESCRIPTOR_RANGE {}\n  BIND BUFFER buf AS storage DESCRIPTOR_SET 0 BINDING 1\n  BIND BUFFER other AS storage DESCRIPTOR_SET 0 BINDING 2\nEND\nRUN p 1 1 1\nEXPECT other IDX 0 EQ 5 5 5 5 5 5 5 5\n",
            2 * N,
            4 * N
        );
        for i in 0..2 * N {
            text += &format!("EXPECT buf IDX {} EQ {}\n", i * 4, u32::from(i < N));
        }
        let mut model = ModelBackend::new(None, Some(SubgroupSize::new(4).unwrap()));
        let r = run_script(&parse(&text).unwrap(), &mut model);
        assert_eq!(r.expects.len(), 2 * N + 1, "{r:?}");
        // Memory no descriptor may write stays as it was, defined.
        assert_eq!(r.expects[0].status, Status::Pass, "{r:?}");
        r.expects[1..]
            .iter()
            .map(|v| v.status)
            .collect::<Vec<Status>>()
    };
    // Every invocation reaches the barrier: the first half 0 + 1, the second half untouched.
    assert_eq!(script("barrier();"), vec![Status::Pass; 2 * N]);
    // Half of them skip it: every element undefined, the read-only half included.
    assert_eq!(
        script("if (i < 4u) { barrier(); }"),
        vec![Status::Undefined; 2 * N]
    );
}

/// `lockstep run` compares bit for bit where the model's value is defined and exact: a device
/// buffer that differs in one element is one mismatch naming that element; one of another length
/// (a multisampled image cannot be read back) is not compared.
#[test]
fn a_device_value_that_differs_from_a_defined_one_is_a_mismatch_naming_the_element() {
    let src = "#version 450\nlayout(local_size_x = 8) in;\nlayout(binding = 0) buffer B { uint b[]; };\nvoid main() { b[gl_LocalInvocationID.x] = gl_LocalInvocationID.x; }\n";
    let module = compile(src, SourceLang::Glsl, &SourceOptions::default()).unwrap();
    let mut job = KernelJob::new(module);
    job.buffers
        .push(JobBuffer::new(0, 0, HostBuffer::from_slice(&[0u32; N])));
    let model = job.run_model(SubgroupSize::new(4).unwrap(), None).unwrap();
    let bytes = |v: &[u32]| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()).collect() };
    let mut dev: Vec<u32> = (0..N as u32).collect();
    let same = bytes(&dev);
    let r = job.compare(
        &model,
        Some(std::slice::from_ref(&same)),
        Tolerance::default(),
    );
    assert!(r.ok() && r.buffers[0].mismatches == 0, "{}", r.text());
    dev[5] = 99;
    let r = job.compare(&model, Some(&[bytes(&dev)]), Tolerance::default());
    assert_eq!(r.buffers[0].mismatches, 1, "{}", r.text());
    assert!(!r.ok());
    // the element, both values, and the invocation that wrote it on the model (subgroup size 4)
    assert!(
        r.text().contains(
            "b[5]: model 5 device 99 (by workgroup (0,0,0) invocation 5 (subgroup 1 lane 1))"
        ),
        "{}",
        r.text()
    );
    let r = job.compare(&model, Some(&[same[..16].to_vec()]), Tolerance::default());
    assert_eq!(r.buffers[0].mismatches, 0, "{}", r.text());
}

/// GLSL 4.60, 8.11 Atomic Memory Functions: the value an atomic returns depends on the order the
/// invocations ran in; the final value of a commuting atomic does not. `lockstep run` counts the
/// first order-dependent (listed, not compared) and the second exact.
#[test]
fn values_an_atomic_returned_are_order_dependent_and_its_final_value_exact() {
    let src = "#version 450\nlayout(local_size_x = 8) in;\nlayout(binding = 0) buffer B { uint b[]; };\nlayout(binding = 1) buffer C { uint c; };\nvoid main() { b[gl_LocalInvocationID.x] = atomicAdd(c, 1u); }\n";
    let module = compile(src, SourceLang::Glsl, &SourceOptions::default()).unwrap();
    let mut job = KernelJob::new(module);
    job.buffers
        .push(JobBuffer::new(0, 0, HostBuffer::from_slice(&[0u32; N])));
    job.buffers
        .push(JobBuffer::new(0, 1, HostBuffer::from_slice(&[0u32])));
    let model = job.run_model(SubgroupSize::new(4).unwrap(), None).unwrap();
    let r = job.compare(&model, None, Tolerance::default());
    let counts = |b: usize| {
        let x = &r.buffers[b];
        (x.exact, x.order_dependent, x.undefined, x.racy)
    };
    assert_eq!(counts(0), (0, N, 0, 0), "{}", r.text());
    assert_eq!(counts(1), (1, 0, 0, 0), "{}", r.text());
    assert_eq!(model.run.buffers[1].bytes, (N as u32).to_le_bytes());
}

/// The model's verdicts reach Amber's EXPECTs as byte ranges: a run of elements left undefined
/// for one reason is one range, however long the buffer (a poisoned dispatch over a large buffer
/// must not make an annotation per element).
#[test]
fn a_run_of_elements_left_undefined_for_one_reason_is_one_annotation() {
    use lockstep::amber::backend::{Annotation, Backend, BackendError, BackendKind, Dispatch};
    use lockstep::amber::backend::{AnnotationKind, DispatchOutput};
    use lockstep::amber::parse::Unsupported;
    use lockstep::amber::script::Script;
    /// The model, keeping what each dispatch annotated.
    struct Recording(ModelBackend, Vec<Vec<Vec<Annotation>>>);
    impl Backend for Recording {
        fn kind(&self) -> BackendKind {
            self.0.kind()
        }
        fn forced_mode(&self) -> Option<lockstep::reconverge::Mode> {
            self.0.forced_mode()
        }
        fn requirements(&self, s: &Script) -> Result<(), Unsupported> {
            self.0.requirements(s)
        }
        fn dispatch(&mut self, d: &Dispatch<'_>) -> Result<DispatchOutput, BackendError> {
            let out = self.0.dispatch(d)?;
            self.1.push(out.annotations.clone());
            Ok(out)
        }
    }
    const M: usize = 4096;
    let run = |body: &str| {
        let text = format!(
            "#!amber\nSHADER compute k GLSL\n#version 450\nlayout(local_size_x = 8) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\nvoid main() {{ uint i = gl_LocalInvocationID.x; {body} }}\nEND\nBUFFER buf DATA_TYPE uint32 SIZE {M} FILL 0\nPIPELINE compute p\n  ATTACH k\n  BIND BUFFER buf AS storage DESCRIPTOR_SET 0 BINDING 0\nEND\nRUN p 1 1 1\n"
        );
        let mut rec = Recording(
            ModelBackend::new(None, Some(SubgroupSize::new(4).unwrap())),
            Vec::new(),
        );
        run_script(&parse(&text).unwrap(), &mut rec);
        assert_eq!(rec.1.len(), 1);
        rec.1.remove(0).remove(0)
    };
    // A barrier half the invocations skip: the whole buffer, one range.
    let a = run("if (i < 4u) { barrier(); } b[i] = 1u;");
    assert_eq!(a.len(), 1, "{a:?}");
    assert_eq!(
        (a[0].bytes.clone(), a[0].kind),
        (0..4 * M, AnnotationKind::Undefined)
    );
    // Two invocations race on element 3, two others on element 100: two ranges, the rest
    // defined.
    let a = run("if (i >= 6u) { b[3] = i; } if (i <= 1u) { b[100] = i; }");
    let ranges: Vec<_> = a.iter().map(|x| x.bytes.clone()).collect();
    assert_eq!(ranges, vec![12..16, 400..404], "{a:?}");
}

/// The report of `src` run on the model over `workgroups` with `buffers` (u32 words) at bindings
/// 0, 1, …: each finding's kind and whether it fails the run, and whether the run is ok — as the
/// JSON report says, by default, with `--strict` and with `--allow-same-value-races`.
fn fail_policy(
    src: &str,
    workgroups: [u32; 3],
    buffers: &[&[u32]],
) -> [(Vec<(String, bool)>, bool); 3] {
    let module = compile(src, SourceLang::Glsl, &SourceOptions::default()).unwrap();
    let mut job = KernelJob::new(module);
    job.workgroups = workgroups;
    for (i, b) in buffers.iter().enumerate() {
        job.buffers
            .push(JobBuffer::new(0, i as u32, HostBuffer::from_slice(b)));
    }
    let model = job.run_model(SubgroupSize::new(4).unwrap(), None).unwrap();
    let mut report = job.compare(&model, None, Tolerance::default());
    let policy = |strict, allow_same_value_races| FailPolicy {
        spin_waits: strict,
        lost_paths: strict,
        allow_same_value_races,
    };
    [
        policy(false, false),
        policy(true, false),
        policy(false, true),
    ]
    .map(|p| {
        report.policy = p;
        let j = report.json();
        let kinds = j["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["kind"].as_str().unwrap().to_string(),
                    f["fails"].as_bool().unwrap(),
                )
            })
            .collect();
        assert_eq!(j["ok"].as_bool().unwrap(), report.ok());
        (kinds, report.ok())
    })
}

/// Which findings fail a run (README, "Decisions"; an atomic's order-dependent result is
/// explained, never a failure), and what the JSON report calls each kind. A same-value race is a
/// data race by the Vulkan memory model (Appendix B, Data Race: two conflicting accesses with no
/// location-ordered relation, and "Applications must ensure that no data races occur", with no
/// exception for a value): it fails, a warning only with `--allow-same-value-races`. A spin-wait
/// on another workgroup has no forward-progress guarantee ("Shader Invocation Progress") but is no
/// error of the program's: a warning, a failure under `--strict`. So is a branch on an undefined
/// value: an undefined value is some value — "each consumption of Result <id> yields an arbitrary,
/// possibly different bit pattern" (SPIR-V 1.6, `OpUndef`) — and neither SPIR-V nor Vulkan makes a
/// branch on one undefined behaviour; what it leaves undefined in a buffer fails as that element.
/// A barrier not every invocation reaches fails always.
#[test]
fn same_value_races_fail_unless_allowed_spin_waits_are_warnings_unless_strict_and_order_dependence_never_fails(
) {
    let head = "#version 450\n#extension GL_KHR_memory_scope_semantics : require\n";
    let kinds = |r: &(Vec<(String, bool)>, bool)| r.0.clone();
    let has = |r: &(Vec<(String, bool)>, bool), k: &str, fails: bool| {
        r.0.iter().any(|(n, f)| n == k && *f == fails)
    };
    // A finding of kind `k`: a warning in the plain run (which passes), a failure with --strict.
    let warning_unless_strict =
        |k: &str, plain: &(Vec<(String, bool)>, bool), strict: &(Vec<(String, bool)>, bool)| {
            assert!(has(plain, k, false) && plain.1, "{k}: {:?}", kinds(plain));
            assert!(
                has(strict, k, true) && !strict.1,
                "{k}: {:?}",
                kinds(strict)
            );
        };
    // Eight invocations store 1 into b[0], unordered: a failure, by default and with --strict, a
    // warning when allowed.
    let [plain, strict, allowed] = fail_policy(
        &format!("{head}layout(local_size_x = 8) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\nvoid main() {{ b[0] = 1u; }}\n"),
        [1, 1, 1],
        &[&[0]],
    );
    for r in [&plain, &strict] {
        assert!(has(r, "same_value_race", true) && !r.1, "{:?}", kinds(r));
    }
    assert!(
        has(&allowed, "same_value_race", false) && allowed.1,
        "{:?}",
        kinds(&allowed)
    );
    assert!(
        !plain.0.iter().any(|(n, _)| n == "race"),
        "{:?}",
        kinds(&plain)
    );
    // Each workgroup waits for the one before it.
    let [plain, strict, _] = fail_policy(
        &format!("{head}layout(local_size_x = 1) in;\nlayout(binding = 0) buffer B {{ uint flag[]; }};\nvoid main() {{\n  uint k = gl_WorkGroupID.x;\n  if (k > 0u) {{\n    while (atomicLoad(flag[k - 1u], gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsAcquire) == 0u) {{}}\n  }}\n  atomicStore(flag[k], 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelease);\n}}\n"),
        [4, 1, 1],
        &[&[0; 4]],
    );
    warning_unless_strict("spin_wait", &plain, &strict);
    // Tickets from one counter: the values returned depend on the order.
    let [plain, strict, _] = fail_policy(
        &format!("{head}layout(local_size_x = 8) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\nlayout(binding = 1) buffer C {{ uint c; }};\nvoid main() {{ b[gl_LocalInvocationID.x] = atomicAdd(c, 1u); }}\n"),
        [1, 1, 1],
        &[&[0; 8], &[0]],
    );
    for r in [&plain, &strict] {
        assert!(has(r, "order_dependent", false) && r.1, "{:?}", kinds(r));
    }
    // A branch on a value never written whose ways leave the buffer alike: a warning.
    let [plain, strict, _] = fail_policy(
        &format!("{head}layout(local_size_x = 8) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\nshared uint never;\nvoid main() {{\n  uint i = gl_LocalInvocationID.x;\n  uint v = 1u;\n  if (never == i) {{ v = 2u; }}\n  barrier();\n  b[i] = 1u;\n}}\n"),
        [1, 1, 1],
        &[&[0; 8]],
    );
    warning_unless_strict("lost_path", &plain, &strict);
    // A branch on a value never written that leaves its buffer undefined, and a barrier half the
    // invocations skip.
    let [plain, _, _] = fail_policy(
        &format!("{head}layout(local_size_x = 8) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\nshared uint never;\nvoid main() {{\n  uint i = gl_LocalInvocationID.x;\n  if (never == i) {{ b[i] = 1u; }}\n  if (i < 4u) {{ barrier(); }}\n}}\n"),
        [1, 1, 1],
        &[&[0; 8]],
    );
    for (k, fails) in [
        ("lost_path", false),
        ("undefined", true),
        ("divergent_barrier", true),
    ] {
        assert!(has(&plain, k, fails), "{k}: {:?}", kinds(&plain));
    }
    assert!(!plain.1);
}
