//! Scopes in the memory model, each rule on a minimal kernel written here: atomics are atomic with
//! each other only within each other's scope; release and acquire (atomics and fences) synchronize
//! only where each is in the other's scope; a control barrier orders memory among the invocations
//! its memory scope includes (a subgroup barrier within its subgroup). With the atomics' commute
//! classes and same-value reads that the race shadow records. Each test cites the rule; the
//! expected values come from the rule, not from the interpreter (Vulkan spec, Appendix B "Memory
//! Model"; GL_KHR_shader_subgroup; GL_KHR_memory_scope_semantics).
#![cfg(feature = "vulkan")]
use crate::memory_model::{races, run, run_words, texts};
use crate::spirv_support::u32s;
use lockstep::spirv::*;

/// Asserts a race between a write at line `wrote` and a read at line `read` of `k.comp` where
/// `racy`, and no race at all otherwise.
fn expect_race(r: &ModelRun, racy: bool, (wrote, read): (u32, u32), what: &str) {
    let found = races(r);
    if racy {
        let (w, rd) = (
            format!("wrote at k.comp:{wrote}"),
            format!("read at k.comp:{read}"),
        );
        assert!(
            found.iter().any(|(_, t)| t.contains(&w) && t.contains(&rd)),
            "{what}: {found:?}"
        );
    } else {
        assert!(found.is_empty(), "{what}: {found:?}");
    }
}

// Appendix B, Synchronizes-With, within a workgroup: a release and an acquire at Subgroup scope
// synchronize two invocations of one subgroup and not two of different subgroups (each must be in
// the other's scope); at Workgroup scope they synchronize both.
#[test]
fn a_subgroup_scope_release_acquire_pair_orders_data_within_its_subgroup_only() {
    let body = |scope: &str, other: u32| {
        format!(
            "layout(local_size_x = 8) in;\n\
             layout(binding = 0) coherent buffer B {{ uint data; uint flag; uint out_[]; }};\n\
             void main() {{\n\
               uint i = gl_LocalInvocationID.x;\n\
               if (i == 0u) {{\n\
                 data = 5u;\n\
                 atomicStore(flag, 1u, {scope}, gl_StorageSemanticsBuffer, gl_SemanticsRelease);\n\
               }}\n\
               if (i == {other}u) {{\n\
                 uint f = atomicLoad(flag, {scope}, gl_StorageSemanticsBuffer, gl_SemanticsAcquire);\n\
                 if (f == 1u) {{ out_[0] = data; }}\n\
               }}\n\
             }}\n"
        )
    };
    for (scope, other, racy) in [
        ("gl_ScopeSubgroup", 1, false),
        ("gl_ScopeSubgroup", 4, true),
        ("gl_ScopeWorkgroup", 4, false),
    ] {
        let r = run(&body(scope, other), 4, [1, 1, 1], &[vec![0; 3]]);
        // the reader saw the flag (the scheduler ran invocation 0's branch first) and copied data
        assert_eq!(u32s(&r.buffers[0].bytes)[2], 5, "{scope}, {other}");
        expect_race(&r, racy, (10, 15), &format!("{scope}, invocation {other}"));
    }
}

// Appendix B, Data Race: two accesses race unless both are atomic (each in the other's scope) or
// one happens-before the other — an atomic after another workgroup's plain write is not "both
// atomic", whichever of the two comes first.
#[test]
fn an_atomic_after_another_workgroups_plain_write_races() {
    let r = run(
        "layout(local_size_x = 1) in;\n\
         layout(binding = 0) coherent buffer B { uint x; };\n\
         void main() { if (gl_WorkGroupID.x == 0u) x = 5u; else atomicAdd(x, 1u); }\n",
        1,
        [2, 1, 1],
        &[vec![0]],
    );
    let found = races(&r);
    assert!(
        found
            .iter()
            .any(|(c, t)| *c == RaceClass::Value && t.contains("k.comp:7")),
        "{found:?}"
    );
}

// Appendix B, Data Race: atomic operations are ordered by their atomicity only where "each is in
// the other's scope" (the scope of an atomic names which invocations it is atomic with:
// Invocation, Subgroup, Workgroup, Device). Each pair below runs in both orders (one location per
// order), so whichever invocation the scheduler runs first, the earlier access's recorded scope
// and the later access's own scope are both checked.
#[test]
fn atomics_race_where_either_ones_scope_leaves_the_other_invocation_out() {
    // Two subgroups of 4 in a workgroup of 8; `lo`'s scope for invocations 0 and 4 (subgroups 0
    // and 1, or lanes 0 and 1 of subgroup 0), `hi`'s for the other one.
    let body = |lo: &str, hi: &str, other: u32| {
        format!(
            "layout(local_size_x = 8) in;\n\
             layout(binding = 0) coherent buffer B {{ uint b[]; }};\n\
             shared uint x; shared uint y;\n\
             void main() {{\n\
               uint i = gl_LocalInvocationID.x;\n\
               if (i == 0u) {{\n\
                 atomicAdd(x, 1u, {lo}, gl_StorageSemanticsShared, gl_SemanticsRelaxed);\n\
                 atomicAdd(y, 1u, {hi}, gl_StorageSemanticsShared, gl_SemanticsRelaxed);\n\
               }}\n\
               if (i == {other}u) {{\n\
                 atomicAdd(x, 1u, {hi}, gl_StorageSemanticsShared, gl_SemanticsRelaxed);\n\
                 atomicAdd(y, 1u, {lo}, gl_StorageSemanticsShared, gl_SemanticsRelaxed);\n\
               }}\n\
             }}\n"
        )
    };
    let (inv, sg, wg, dev) = (
        "gl_ScopeInvocation",
        "gl_ScopeSubgroup",
        "gl_ScopeWorkgroup",
        "gl_ScopeDevice",
    );
    // (narrower, wider, the other invocation, races)
    for (lo, hi, other, racy) in [
        (inv, sg, 1, true),  // lanes 0 and 1: Invocation leaves the other lane out
        (sg, sg, 1, false),  // one subgroup: Subgroup includes both
        (sg, wg, 4, true),   // two subgroups: Subgroup leaves subgroup 1 out
        (sg, dev, 4, true),  // … whatever the other's scope
        (wg, wg, 4, false),  // one workgroup: Workgroup includes both
        (wg, dev, 4, false), // … and so does Device
    ] {
        let r = run(&body(lo, hi, other), 4, [1, 1, 1], &[vec![0]]);
        let found = races(&r);
        let lines = |l: u32| {
            found
                .iter()
                .any(|(_, t)| t.contains(&format!("k.comp:{l}")))
        };
        if racy {
            assert!(lines(11) && lines(12), "{lo} with {hi}: {found:?}");
        } else {
            assert!(found.is_empty(), "{lo} with {hi}: {found:?}");
        }
    }
    // Workgroup-scope atomics of two workgroups race; at the boundary of the slot numbering too
    // (the last invocation of workgroup 0 and the first of workgroup 1).
    let r = run(
        "layout(local_size_x = 2) in;\n\
         layout(binding = 0) coherent buffer B { uint x; };\n\
         void main() { atomicAdd(x, 1u, gl_ScopeWorkgroup, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed); }\n",
        2,
        [2, 1, 1],
        &[vec![0]],
    );
    assert!(!races(&r).is_empty(), "{:?}", texts(&r));
}

// GL_KHR_shader_subgroup, subgroupBarrier(): "the results of any memory stores … performed prior to
// the call will be visible to any future coherent access to the same memory performed by any other
// shader invocation within the same subgroup" — OpControlBarrier(Subgroup, Subgroup,
// AcquireRelease | … | WorkgroupMemory). It orders shared memory within a subgroup, not between
// subgroups (Appendix B, Data Race).
#[test]
fn a_subgroup_barrier_orders_shared_memory_within_its_subgroup_only() {
    let body = |read: &str| {
        format!(
            "layout(local_size_x = 8) in;\n\
             layout(binding = 0) coherent buffer B {{ uint b[]; }};\n\
             shared uint s[8];\n\
             void main() {{\n\
               uint i = gl_LocalInvocationID.x;\n\
               s[i] = i + 1u;\n\
               subgroupBarrier();\n\
               b[i] = s[{read}];\n\
             }}\n"
        )
    };
    let within = run(&body("i ^ 1u"), 4, [1, 1, 1], &[vec![0; 8]]);
    assert!(within.findings.is_empty(), "{:?}", texts(&within));
    assert_eq!(u32s(&within.buffers[0].bytes), [2, 1, 4, 3, 6, 5, 8, 7]);
    let across = run(&body("(i + 4u) % 8u"), 4, [1, 1, 1], &[vec![0; 8]]);
    let found = races(&across);
    assert!(
        found.iter().any(|(_, t)| t.contains("k.comp:12")),
        "{found:?}"
    );
}

// Appendix B, Data Race: a write that stores the value already there still races with an unordered
// read; but every order gives the reader that value, so (README "Decisions", same-value races) it
// is reported as a same-value race and the value read is kept.
#[test]
fn a_read_racing_with_a_write_of_the_value_already_there_is_a_same_value_race() {
    let r = run(
        "layout(local_size_x = 1) in;\n\
         layout(binding = 0) coherent buffer B { uint x; uint y; };\n\
         void main() { if (gl_WorkGroupID.x == 0u) x = 7u; else y = x; }\n",
        1,
        [2, 1, 1],
        &[vec![7, 0]],
    );
    let found = races(&r);
    assert!(!found.is_empty(), "{:?}", texts(&r));
    assert!(
        found.iter().all(|(c, _)| *c == RaceClass::SameValue),
        "{found:?}"
    );
    assert_eq!(u32s(&r.buffers[0].bytes), [7, 7]);
    assert_eq!(r.status(r.buffers[0].word_taint(1)), WordStatus::Exact);
}

// Appendix B: unordered atomics are not data races, but the value they leave is the result of
// whichever order they ran in. Minimums commute — every order leaves the least operand; a
// minimum and a maximum do not (`max(min(5, 3), 9)` is 9, `min(max(5, 9), 3)` is 3).
#[test]
fn unordered_minimums_leave_one_value_and_a_minimum_with_a_maximum_does_not() {
    let body = |odd: &str| {
        format!(
            "layout(local_size_x = 8) in;\n\
             layout(binding = 0) coherent buffer B {{ uint b[]; }};\n\
             shared uint s;\n\
             void main() {{\n\
               uint i = gl_LocalInvocationID.x;\n\
               if (i == 0u) s = 5u;\n\
               barrier();\n\
               if (i % 2u == 0u) atomicMin(s, 3u + i); else {odd}(s, 9u + i);\n\
               barrier();\n\
               if (i == 0u) b[0] = s;\n\
             }}\n"
        )
    };
    let min = run(&body("atomicMin"), 4, [1, 1, 1], &[vec![0]]);
    assert!(min.findings.is_empty(), "{:?}", texts(&min));
    assert_eq!(u32s(&min.buffers[0].bytes), [3]);
    assert_eq!(min.status(min.buffers[0].word_taint(0)), WordStatus::Exact);
    let mixed = run(&body("atomicMax"), 4, [1, 1, 1], &[vec![0]]);
    assert!(
        matches!(
            mixed.status(mixed.buffers[0].word_taint(0)),
            WordStatus::OrderDependent(_)
        ),
        "{:?}",
        mixed.status(mixed.buffers[0].word_taint(0))
    );
}

// Appendix B, Synchronizes-With through fences: a release fence before a relaxed atomic write and
// an acquire fence after a relaxed atomic read that reads it synchronize where the fences, like the
// atomics, are each in the other's scope. `memoryBarrierBuffer()` is a fence of Device scope;
// `groupMemoryBarrier()` one of Workgroup scope, which leaves the other workgroup out — on either
// side, the data still races (the bug of "groupMemoryBarrier where memoryBarrier was needed"); a
// Device-scope fence after a Workgroup-scope one acquires what the read before both saw.
#[test]
fn fences_order_data_between_workgroups_only_where_their_scope_includes_the_other() {
    let body = |rel: &str, acq: &str| {
        format!(
            "layout(local_size_x = 1) in;\n\
             layout(binding = 0) coherent buffer B {{ uint data; uint flag; uint out_[]; }};\n\
             void main() {{\n\
               if (gl_WorkGroupID.x == 0) {{\n\
                 data = 5u;\n\
                 {rel};\n\
                 atomicStore(flag, 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);\n\
               }} else {{\n\
                 uint f = atomicLoad(flag, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);\n\
                 {acq};\n\
                 if (f == 1u) {{ out_[0] = data; }}\n\
               }}\n\
             }}\n"
        )
    };
    let (dev, wg) = ("memoryBarrierBuffer()", "groupMemoryBarrier()");
    let explicit_wg =
        "memoryBarrier(gl_ScopeWorkgroup, gl_StorageSemanticsBuffer, gl_SemanticsAcquireRelease)";
    for (rel, acq, racy) in [
        (dev, dev, false),
        (wg, dev, true),
        (dev, wg, true),
        (explicit_wg, dev, true),
        (dev, explicit_wg, true),
        // A fence too narrow, then one wide enough: the second still acquires what the read saw
        // (the first must not drop it).
        (dev, "groupMemoryBarrier(); memoryBarrierBuffer()", false),
    ] {
        let r = run(&body(rel, acq), 1, [2, 1, 1], &[vec![0; 3]]);
        assert_eq!(
            u32s(&r.buffers[0].bytes)[2],
            5,
            "{rel}, {acq}: the reader saw the flag"
        );
        expect_race(&r, racy, (9, 15), &format!("{rel}, {acq}"));
    }
}

// Appendix B: a control barrier's memory scope bounds whom its memory semantics order with —
// `controlBarrier(gl_ScopeWorkgroup, gl_ScopeSubgroup, …)` waits for the whole workgroup but makes
// shared writes visible only within each subgroup; read across subgroups they still race.
#[test]
fn a_workgroup_barrier_of_subgroup_memory_scope_orders_memory_within_each_subgroup_only() {
    let body = |fence: &str, scope: &str, read: &str| {
        format!(
            "layout(local_size_x = 8) in;\n\
             layout(binding = 0) coherent buffer B {{ uint b[]; }};\n\
             shared uint s[8];\n\
             void main() {{\n\
               uint i = gl_LocalInvocationID.x;\n\
               s[i] = i + 1u;\n\
               {fence}\n\
               controlBarrier(gl_ScopeWorkgroup, {scope}, gl_StorageSemanticsShared, gl_SemanticsAcquireRelease);\n\
               b[i] = s[{read}];\n\
             }}\n"
        )
    };
    let (within, across) = ("i ^ 1u", "(i + 4u) % 8u");
    // A fence of Device scope before the barrier orders across the workgroup again (the
    // `memoryBarrierShared(); barrier();` idiom), whatever the barrier's own memory scope.
    let fence = "memoryBarrierShared();";
    for (fence, scope, read, racy) in [
        ("", "gl_ScopeSubgroup", within, false),
        ("", "gl_ScopeSubgroup", across, true),
        ("", "gl_ScopeWorkgroup", across, false),
        (fence, "gl_ScopeSubgroup", across, false),
    ] {
        let r = run(&body(fence, scope, read), 4, [1, 1, 1], &[vec![0; 8]]);
        let found = races(&r);
        if racy {
            assert!(
                found.iter().any(|(_, t)| t.contains("k.comp:13")),
                "{fence} {scope}, {read}: {found:?}"
            );
        } else {
            assert!(found.is_empty(), "{fence} {scope}, {read}: {found:?}");
        }
    }
}

// Appendix B: what an invocation acquired before a control barrier with acquire and release
// semantics, the invocations its memory scope orders with have after it — within each subgroup
// for a workgroup barrier of Subgroup memory scope, across the workgroup for one of Workgroup
// scope; a subgroup barrier within its subgroup. Workgroup 0 writes `data` and releases the flag; in workgroup 1, invocation 0 acquires it
// and the barrier follows; the invocation `reader` then reads `data`: ordered where the barrier's
// memory scope includes invocation 0 (subgroups of 4: invocation 1 is in its subgroup, 4 is not).
#[test]
fn a_barrier_passes_what_one_invocation_acquired_to_those_its_memory_scope_includes() {
    let body = |(exec, scope): (&str, &str), reader: u32| {
        format!(
            "layout(local_size_x = 8) in;\n\
             layout(binding = 0) coherent buffer B {{ uint data; uint flag; uint out_[]; }};\n\
             void main() {{\n\
               uint i = gl_LocalInvocationID.x;\n\
               if (gl_WorkGroupID.x == 0u) {{\n\
                 if (i == 0u) {{ data = 5u; atomicStore(flag, 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelease); }}\n\
               }} else {{\n\
                 if (i == 0u) {{ out_[1] = atomicLoad(flag, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsAcquire); }}\n\
                 controlBarrier({exec}, {scope}, gl_StorageSemanticsBuffer, gl_SemanticsAcquireRelease);\n\
                 if (i == {reader}u) {{ out_[0] = data; }}\n\
               }}\n\
             }}\n"
        )
    };
    let (wg, sg) = ("gl_ScopeWorkgroup", "gl_ScopeSubgroup");
    for (scope, reader, racy) in [
        ((wg, sg), 1, false),
        ((wg, sg), 5, true),
        ((wg, sg), 4, true),
        ((wg, wg), 4, false),
        // A subgroup barrier: within the subgroup alone.
        ((sg, sg), 1, false),
        ((sg, sg), 5, true),
        ((sg, sg), 4, true),
    ] {
        let r = run(&body(scope, reader), 4, [2, 1, 1], &[vec![0; 4]]);
        let words = u32s(&r.buffers[0].bytes);
        assert_eq!(
            (words[2], words[3]),
            (5, 1),
            "{scope:?}, {reader}: invocation 0 saw the flag and the reader the data"
        );
        expect_race(&r, racy, (10, 14), &format!("{scope:?}, reader {reader}"));
    }
}

// Vulkan spec, "Shader Memory Access Ordering" / Appendix B: SequentiallyConsistent memory
// semantics are treated as AcquireRelease — an atomic store with them releases, an atomic load
// acquires. GLSL cannot write them, so the module is SPIR-V assembly: workgroup 0 stores
// `data = 5` (`data` is `Coherent`: non-private) and then the flag with `sem`, workgroup 1 loads
// the flag with `sem` and, seeing it set, copies `data`. Relaxed (0) leaves the copy racing with
// the store of `data`.
#[test]
fn sequentially_consistent_atomics_release_and_acquire() {
    use lockstep::kernel::{compile, SourceLang, SourceOptions};
    let module = |sem: u32| {
        let asm = format!(
            "
               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main \"main\" %wgid
               OpExecutionMode %main LocalSize 1 1 1
               OpDecorate %wgid BuiltIn WorkgroupId
               OpMemberDecorate %B 0 Offset 0
               OpMemberDecorate %B 1 Offset 4
               OpMemberDecorate %B 2 Offset 8
               OpMemberDecorate %B 0 Coherent
               OpDecorate %B Block
               OpDecorate %buf DescriptorSet 0
               OpDecorate %buf Binding 0
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %bool = OpTypeBool
       %uint = OpTypeInt 32 0
      %uvec3 = OpTypeVector %uint 3
      %v3ptr = OpTypePointer Input %uvec3
       %wgid = OpVariable %v3ptr Input
     %uint_0 = OpConstant %uint 0
     %uint_1 = OpConstant %uint 1
     %uint_2 = OpConstant %uint 2
     %uint_5 = OpConstant %uint 5
     %device = OpConstant %uint 1
        %sem = OpConstant %uint {sem}
          %B = OpTypeStruct %uint %uint %uint
       %bptr = OpTypePointer StorageBuffer %B
        %buf = OpVariable %bptr StorageBuffer
       %eptr = OpTypePointer StorageBuffer %uint
       %main = OpFunction %void None %fn
      %entry = OpLabel
         %id = OpLoad %uvec3 %wgid
          %x = OpCompositeExtract %uint %id 0
      %first = OpIEqual %bool %x %uint_0
       %data = OpAccessChain %eptr %buf %uint_0
       %flag = OpAccessChain %eptr %buf %uint_1
        %out = OpAccessChain %eptr %buf %uint_2
               OpSelectionMerge %done None
               OpBranchConditional %first %write %read
      %write = OpLabel
               OpStore %data %uint_5
               OpAtomicStore %flag %device %sem %uint_1
               OpBranch %done
       %read = OpLabel
          %f = OpAtomicLoad %uint %flag %device %sem
        %set = OpIEqual %bool %f %uint_1
               OpSelectionMerge %after None
               OpBranchConditional %set %copy %after
       %copy = OpLabel
          %d = OpLoad %uint %data
               OpStore %out %d
               OpBranch %after
      %after = OpLabel
               OpBranch %done
       %done = OpLabel
               OpReturn
               OpFunctionEnd
"
        );
        compile(&asm, SourceLang::SpirvAsm, &SourceOptions::default())
            .unwrap()
            .words
    };
    // SequentiallyConsistent | UniformMemory, and Relaxed | UniformMemory
    for (sem, racy) in [(0x10 | 0x40, false), (0x40, true)] {
        let r = run_words(&module(sem), 1, [2, 1, 1], &[vec![0; 3]]);
        assert_eq!(
            u32s(&r.buffers[0].bytes)[2],
            5,
            "semantics {sem:#x}: the flag seen"
        );
        let found = races(&r);
        assert_eq!(!found.is_empty(), racy, "semantics {sem:#x}: {found:?}");
    }
}

// Appendix B, Release Sequence and Synchronizes-With: invocation 4's releasing `atomicAdd`
// continues the release sequence invocation 0's releasing `atomicExchange` heads (both Workgroup
// scope). Invocation 5, in invocation 4's subgroup, reads the sum with an acquire: at Workgroup
// scope it synchronizes with both releases, so invocation 0's store of `data` happens-before its
// read; at Subgroup scope its acquire is not in invocation 0's scope (another subgroup), so it
// synchronizes with invocation 4's release alone, which did not acquire `data` — a race.
#[test]
fn an_acquire_synchronizes_with_a_release_sequence_only_where_it_is_in_the_heads_scope() {
    let body = |acquire: &str| {
        format!(
            "layout(local_size_x = 8) in;\n\
             layout(binding = 0) coherent buffer B {{ uint data; uint flag; uint out_[]; }};\n\
             void main() {{\n\
               uint i = gl_LocalInvocationID.x;\n\
               if (i == 0u) {{\n\
                 data = 5u;\n\
                 atomicExchange(flag, 1u, gl_ScopeWorkgroup, gl_StorageSemanticsBuffer, gl_SemanticsRelease);\n\
               }}\n\
               if (i == 4u) {{\n\
                 atomicAdd(flag, 1u, gl_ScopeWorkgroup, gl_StorageSemanticsBuffer, gl_SemanticsRelease);\n\
               }}\n\
               if (i == 5u) {{\n\
                 uint f = atomicLoad(flag, {acquire}, gl_StorageSemanticsBuffer, gl_SemanticsAcquire);\n\
                 if (f == 2u) {{ out_[0] = data; }}\n\
               }}\n\
             }}\n"
        )
    };
    for (acquire, racy) in [("gl_ScopeWorkgroup", false), ("gl_ScopeSubgroup", true)] {
        let r = run(&body(acquire), 4, [1, 1, 1], &[vec![0; 3]]);
        assert_eq!(
            u32s(&r.buffers[0].bytes)[2],
            5,
            "{acquire}: both releases ran first"
        );
        expect_race(&r, racy, (10, 18), acquire);
    }
}

// Appendix B, Scope: an invocation's Subgroup scope holds the invocations of its subgroup, its
// Workgroup scope those of its workgroup. Two atomics race unless each one's scope holds the other
// invocation — checked here for pairs away from slot 0 and across subgroup boundaries (workgroup
// of 8, subgroups of 4: invocations 0–3 and 4–7), the earlier invocation first.
#[test]
fn atomics_race_by_where_both_invocations_sit_not_by_their_numbers() {
    let body = |p: u32, q: u32, scope: &str| {
        format!(
            "layout(local_size_x = 8) in;\n\
             layout(binding = 0) coherent buffer B {{ uint b[]; }};\n\
             shared uint x;\n\
             void main() {{\n\
               uint i = gl_LocalInvocationID.x;\n\
               if (i == {p}u) atomicAdd(x, 1u, {scope}, gl_StorageSemanticsShared, gl_SemanticsRelaxed);\n\
               if (i == {q}u) atomicAdd(x, 1u, {scope}, gl_StorageSemanticsShared, gl_SemanticsRelaxed);\n\
             }}\n"
        )
    };
    let (sg, wg) = ("gl_ScopeSubgroup", "gl_ScopeWorkgroup");
    // (first, second, scope of both, race): subgroup 0 is {0..3}, subgroup 1 {4..7}
    for (p, q, scope, racy) in [
        (3, 1, sg, false),
        (1, 3, sg, false),
        (5, 6, sg, false),
        (7, 4, sg, false),
        (6, 1, sg, true),
        (2, 5, sg, true),
        (6, 1, wg, false),
        (2, 5, wg, false),
    ] {
        let r = run(&body(p, q, scope), 4, [1, 1, 1], &[vec![0]]);
        assert_eq!(
            !races(&r).is_empty(),
            racy,
            "invocations {p} and {q} at {scope}: {:?}",
            texts(&r)
        );
    }
    // Two workgroups of 8 (slots 0–7 and 8–15): Workgroup scope never holds both.
    let across = |p: u32, q: u32| {
        format!(
            "layout(local_size_x = 8) in;\n\
             layout(binding = 0) coherent buffer B {{ uint x; }};\n\
             void main() {{\n\
               uint i = gl_LocalInvocationID.x;\n\
               if (gl_WorkGroupID.x == 0u && i == {p}u) atomicAdd(x, 1u, gl_ScopeWorkgroup, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);\n\
               if (gl_WorkGroupID.x == 1u && i == {q}u) atomicAdd(x, 1u, gl_ScopeWorkgroup, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);\n\
             }}\n"
        )
    };
    for (p, q) in [(7, 0), (6, 1), (3, 3), (0, 7)] {
        let r = run(&across(p, q), 4, [2, 1, 1], &[vec![0]]);
        assert!(
            !races(&r).is_empty(),
            "workgroup 0's {p} and workgroup 1's {q}: {:?}",
            texts(&r)
        );
    }
}

// Appendix B, Data Race: a read stays a party to a race with every later write it is not ordered
// with, however often other invocations read the location after it. Invocation 0 (subgroup 0)
// reads `s`; invocation 4 (subgroup 1) reads it twice; a subgroup barrier orders invocation 4's
// reads before invocation 5's write — but not invocation 0's read, which races with the write.
#[test]
fn a_read_races_with_a_later_write_after_another_invocation_read_again() {
    let r = run(
        "layout(local_size_x = 8) in;\n\
         layout(binding = 0) coherent buffer B { uint b[]; };\n\
         shared uint s;\n\
         void main() {\n\
           uint i = gl_LocalInvocationID.x;\n\
           if (i == 0u) { b[0] = s; }\n\
           if (i == 4u) { b[1] = s; b[2] = s; }\n\
           subgroupBarrier();\n\
           if (i == 5u) { s = 1u; }\n\
         }\n",
        4,
        [1, 1, 1],
        &[vec![0; 3]],
    );
    let found = races(&r);
    assert!(
        found.iter().any(|(_, t)| t.contains("invocation 0")
            && t.contains("read at k.comp:10")
            && t.contains("invocation 5")),
        "{found:?}"
    );
}

// Appendix B, with GL_KHR_memory_scope_semantics: a fence (`memoryBarrier`) of Subgroup scope
// followed by a control barrier orders the fencing invocations' accesses before the barrier with
// those after it among the invocations the fence's scope includes — the same subgroup — even
// where the barrier's own semantics name no memory. Only subgroup 0 (invocations 0–3, subgroups
// of 4) runs the fence: its neighbours' shared words are ordered across the barrier; subgroup 1's
// still race. With no fence at all, both race; with it in both subgroups, neither.
#[test]
fn a_subgroup_scope_fence_before_a_barrier_orders_memory_within_the_subgroups_that_ran_it() {
    let body = |fencers: &str| {
        format!(
            "layout(local_size_x = 8) in;\n\
             layout(binding = 0) coherent buffer B {{ uint b[]; }};\n\
             shared uint s[8];\n\
             void main() {{\n\
               uint i = gl_LocalInvocationID.x;\n\
               s[i] = i + 1u;\n\
               if ({fencers}) {{ memoryBarrier(gl_ScopeSubgroup, gl_StorageSemanticsShared, gl_SemanticsAcquireRelease); }}\n\
               controlBarrier(gl_ScopeWorkgroup, gl_ScopeWorkgroup, gl_StorageSemanticsNone, gl_SemanticsRelaxed);\n\
               b[i] = s[i ^ 1u];\n\
             }}\n"
        )
    };
    for (fencers, racy) in [
        ("false", [true, true]),
        ("i < 4u", [false, true]),
        ("i >= 4u", [true, false]),
        ("true", [false, false]),
    ] {
        let r = run(&body(fencers), 4, [1, 1, 1], &[vec![0; 8]]);
        assert_eq!(
            u32s(&r.buffers[0].bytes),
            [2, 1, 4, 3, 6, 5, 8, 7],
            "{fencers}"
        );
        let found = races(&r);
        for (g, racy) in racy.into_iter().enumerate() {
            // the words subgroup g writes and reads: s[4g] .. s[4g + 3]
            let in_g = |t: &String| (4 * g..4 * g + 4).any(|w| t.contains(&format!("s[{w}]")));
            assert_eq!(
                found.iter().any(|(_, t)| in_g(t)),
                racy,
                "{fencers}: subgroup {g}: {found:?}"
            );
        }
    }
}
