//! The memory-model rules of the interpreter, each on a minimal kernel written here: memory
//! locations of 8 bits, values of every width in every storage class, ordering by barriers (with
//! their memory semantics), fences and release/acquire atomics, races (and races that store one
//! value), order-dependent values that are followed rather than lost, and `OpUndef` per component.
//! Each test cites the rule; the expected values come from the rule, not from the interpreter.
#![cfg(feature = "vulkan")]
use crate::spirv_support;
use lockstep::model::SubgroupSize;
use lockstep::spirv::*;
use spirv_support::{bindings, bytes_u32, glsl, u32s};

fn cfg(size: u64, wg: [u32; 3]) -> RunConfig {
    cfg_schedules(size, wg, 1)
}

fn cfg_schedules(size: u64, wg: [u32; 3], schedules: u32) -> RunConfig {
    let mut c = RunConfig::new(SubgroupSize::new(size).unwrap(), wg);
    c.schedules = schedules;
    c
}

/// Runs GLSL (a compute shader body after the header) with u32 buffers at bindings 0, 1, …
pub(crate) fn run(body: &str, size: u64, wg: [u32; 3], buffers: &[Vec<u32>]) -> ModelRun {
    let src = format!(
        "#version 450\n#extension GL_KHR_memory_scope_semantics : enable\n#extension GL_EXT_shader_explicit_arithmetic_types : enable\n#extension GL_KHR_shader_subgroup_basic : enable\n{body}"
    );
    run_words(&glsl(&src, "k.comp"), size, wg, buffers)
}

/// Runs a module with u32 buffers at bindings 0, 1, …
pub(crate) fn run_words(words: &[u32], size: u64, wg: [u32; 3], buffers: &[Vec<u32>]) -> ModelRun {
    let k = decode(words, &DecodeOptions::default()).unwrap();
    let bufs = bindings(buffers.iter().map(|b| bytes_u32(b)));
    run_model(&k, cfg(size, wg), &bufs, None).unwrap()
}

pub(crate) fn texts(r: &ModelRun) -> Vec<String> {
    r.findings.iter().map(|f| r.finding_text(f)).collect()
}

pub(crate) fn races(r: &ModelRun) -> Vec<(RaceClass, String)> {
    r.findings
        .iter()
        .filter_map(|f| match f {
            Finding::Race { class, .. } => Some((*class, r.finding_text(f))),
            _ => None,
        })
        .collect()
}

// Vulkan spec, Appendix B "Memory Model", Memory Location: "A memory location identifies unique
// storage for 8 bits of data"; accesses to different locations never conflict.
#[test]
fn a_memory_location_is_8_bits_so_neighbouring_16_and_8_bit_elements_do_not_race() {
    let r = run(
        "layout(local_size_x = 8) in;\n\
         layout(binding = 0) coherent buffer B { uint b[]; };\n\
         shared uint16_t h[8];\n\
         shared int8_t c[8];\n\
         void main() {\n\
           uint i = gl_LocalInvocationID.x;\n\
           h[i] = uint16_t(100 + i);\n\
           c[i] = int8_t(-int(i));\n\
           barrier();\n\
           b[i] = uint(h[(i + 1) % 8]) + uint(int(c[(i + 7) % 8]) + 1000);\n\
         }\n",
        8,
        [1, 1, 1],
        &[vec![0; 8]],
    );
    assert!(r.findings.is_empty(), "{:?}", texts(&r));
    let b = &r.buffers[0];
    for i in 0..8u32 {
        let want = 100 + (i + 1) % 8 + (1000 - (i + 7) % 8);
        assert_eq!(u32s(&b.bytes)[i as usize], want, "b[{i}]");
        assert_eq!(r.status(b.word_taint(i as usize)), WordStatus::Exact);
    }
}

// Appendix B, Memory Location: a 16-bit store writes two locations and leaves the neighbouring
// ones as they were — in Function and Workgroup variables too (issue 19, rule 2).
#[test]
fn eight_and_sixteen_bit_values_in_function_and_workgroup_variables_are_kept() {
    let r = run(
        "layout(local_size_x = 4) in;\n\
         layout(binding = 0) coherent buffer B { uint b[]; };\n\
         shared u16vec2 s[4];\n\
         void main() {\n\
           uint i = gl_LocalInvocationID.x;\n\
           int8_t e = int8_t(-3);\n\
           int16_t f = int16_t(-300);\n\
           s[i] = u16vec2(i, 2 * i);\n\
           barrier();\n\
           b[i] = uint(s[i].y) * 1000u + uint(int(e) + int(f) + 400);\n\
         }\n",
        4,
        [1, 1, 1],
        &[vec![0; 4]],
    );
    assert!(r.findings.is_empty(), "{:?}", texts(&r));
    let b = &r.buffers[0];
    assert_eq!(u32s(&b.bytes), [97, 2097, 4097, 6097]);
    for i in 0..4 {
        assert_eq!(r.status(b.word_taint(i)), WordStatus::Exact);
    }
}

// Appendix B: a control barrier with Workgroup memory semantics makes every access before it
// happen-before every access after it in the workgroup; atomics return order-dependent values, but
// commuting ones leave one value behind (the CTS's `atomic_barrier_sum_small` expects 10).
#[test]
fn a_barrier_orders_atomics_and_the_memory_they_leave_holds_one_value() {
    let r = run(
        "layout(local_size_x = 3) in;\n\
         layout(binding = 0) coherent buffer B { uint b[]; };\n\
         shared uint s;\n\
         void main() {\n\
           if (gl_LocalInvocationID.x == 0) { atomicExchange(s, 7); }\n\
           barrier();\n\
           atomicAdd(s, 1);\n\
           barrier();\n\
           if (gl_LocalInvocationID.x == 0) { b[0] = atomicExchange(s, 0); }\n\
         }\n",
        4,
        [1, 1, 1],
        &[vec![123; 4]],
    );
    assert!(r.findings.is_empty(), "{:?}", texts(&r));
    assert_eq!(u32s(&r.buffers[0].bytes)[0], 10);
    assert_eq!(r.status(r.buffers[0].word_taint(0)), WordStatus::Exact);
}

// Appendix B, Data Race: without a barrier between them, a write and a read of one location by
// different invocations race; `barrier()`'s semantics (WorkgroupMemory) do not order buffer
// memory, so buffer accesses on either side of it still race.
#[test]
fn a_barrier_orders_only_the_storage_classes_its_semantics_name() {
    let body = |fence: &str| swap_across(&format!("{fence}\n barrier();"));
    let racy = run(&body(""), 2, [1, 1, 1], &[vec![0; 4]]);
    let found = races(&racy);
    // Both reads race, each with the other invocation's write — the write of invocation 1, the
    // workgroup's last, as much as that of invocation 0 — and both are told the missing fence.
    assert!(found.len() >= 2, "{found:?}");
    assert!(
        found.iter().all(|(c, t)| *c == RaceClass::Value
            && t.contains("its memory semantics leave out buffer memory")
            && t.contains("memoryBarrierBuffer()")),
        "{found:?}"
    );
    // memoryBarrierBuffer() before barrier(): the idiom that orders buffer memory.
    let ordered = run(&body("memoryBarrierBuffer();"), 2, [1, 1, 1], &[vec![0; 4]]);
    assert!(ordered.findings.is_empty(), "{:?}", texts(&ordered));
    assert_eq!(u32s(&ordered.buffers[0].bytes), [1, 2, 2, 1]);
}

// Appendix B, Private vs. Non-Private: "By default, non-atomic memory operations are treated as
// private … for private memory operations to be Location-Ordered between distinct agents requires
// using system-synchronizes-with rather than shader-based synchronization"; Location-Ordered: a
// write and another invocation's read are ordered by happens-before only when both are
// non-private. In a `GLSL450` module an access is non-private through memory declared `coherent`
// (or `volatile`, which glslang declares coherent too): the chapter has compilers map `coherent`
// to the availability and visibility flags, as SPIRV-Tools' memory-model upgrade does, member by
// member (GLSL 4.60 §4.10: non-coherent memory may be cached per invocation). So the exchange that
// `memoryBarrierBuffer(); barrier();` orders is a data race through a plain buffer and none
// through a `coherent` one — or a `coherent` member; another member's `coherent` does not reach it.
// Under the Vulkan memory model (`#pragma use_vulkan_memory_model`) the same holds through the
// accesses' NonPrivatePointer, which glslang gives exactly the `coherent` ones.
#[test]
fn a_private_buffer_access_is_ordered_with_another_invocations_only_by_the_api() {
    let swap = |head: &str, decl: &str| {
        format!(
            "{head}\nlayout(local_size_x = 2) in;\n{decl}\n\
             void main() {{\n\
               uint i = gl_LocalInvocationID.x;\n\
               b[i] = i + 1;\n\
               memoryBarrierBuffer();\n\
               barrier();\n\
               b[2 + i] = b[1 - i];\n\
             }}\n"
        )
    };
    let vmm = "#pragma use_vulkan_memory_model";
    for (head, decl, at, racy) in [
        ("", "layout(binding = 0) buffer B { uint b[]; };", 0, true),
        (
            "",
            "layout(binding = 0) coherent buffer B { uint b[]; };",
            0,
            false,
        ),
        (
            "",
            "layout(binding = 0) volatile buffer B { uint b[]; };",
            0,
            false,
        ),
        (
            "",
            "layout(binding = 0) buffer B { uint f; coherent uint b[]; };",
            1,
            false,
        ),
        (
            "",
            "layout(binding = 0) buffer B { coherent uint f; uint b[]; };",
            1,
            true,
        ),
        (vmm, "layout(binding = 0) buffer B { uint b[]; };", 0, true),
        (
            vmm,
            "layout(binding = 0) coherent buffer B { uint b[]; };",
            0,
            false,
        ),
    ] {
        let r = run(&swap(head, decl), 2, [1, 1, 1], &[vec![0; 5]]);
        let found = races(&r);
        if racy {
            // Both reads race with the other invocation's write, which the barrier orders before
            // them: the race is named as private, with the fix.
            assert!(found.len() >= 2, "{decl}: {found:?}");
            assert!(
                found
                    .iter()
                    .all(|(_, t)| t.contains("that only the API can order")
                        && t.contains("is not `coherent`")
                        && t.contains("Private vs. Non-Private")),
                "{decl}: {found:?}"
            );
            for k in [2, 3] {
                assert!(
                    matches!(
                        r.status(r.buffers[0].word_taint(at + k)),
                        WordStatus::Racy(_)
                    ),
                    "{decl}: word {k}"
                );
            }
        } else {
            assert!(r.findings.is_empty(), "{decl}: {:?}", texts(&r));
            assert_eq!(
                u32s(&r.buffers[0].bytes)[at..at + 4],
                [1, 2, 2, 1],
                "{decl}"
            );
        }
    }
}

// Appendix B, Private vs. Non-Private, between workgroups — the kernel an NVIDIA H200 ran in
// docs/fidelity.md ("Private accesses on the H200"): workgroup 0 writes `data`, then releases a
// `coherent` flag; workgroup 1 reads `data` once before it waits (a race in any case), acquires
// the flag and reads `data` again. With `data` plain, the second read is a race too though the
// release and acquire order it (the H200 returned the stale first value in 1,717 of 2,048 pairs);
// with `data` coherent, it is defined: 1.
#[test]
fn a_message_passed_through_a_private_payload_is_racy_though_release_and_acquire_order_it() {
    let body = |q: &str| {
        format!(
            "layout(local_size_x = 1) in;\n\
             layout(binding = 0) {q}buffer D {{ uint data; }};\n\
             layout(binding = 1) coherent buffer F {{ uint flag; }};\n\
             layout(binding = 2) buffer O {{ uint before; uint after; }};\n\
             void main() {{\n\
               if (gl_WorkGroupID.x == 0u) {{\n\
                 data = 1u;\n\
                 memoryBarrierBuffer();\n\
                 atomicExchange(flag, 1u);\n\
               }} else {{\n\
                 before = data;\n\
                 while (atomicAdd(flag, 0u) == 0u) {{}}\n\
                 memoryBarrierBuffer();\n\
                 after = data;\n\
               }}\n\
             }}\n"
        )
    };
    let bufs = [vec![0], vec![0], vec![0, 0]];
    let plain = run(&body(""), 1, [2, 1, 1], &bufs);
    let out = &plain.buffers[2];
    assert!(matches!(
        plain.status(out.word_taint(1)),
        WordStatus::Racy(_)
    ));
    assert!(
        races(&plain)
            .iter()
            .any(|(_, t)| t.contains("read at k.comp:18")
                && t.contains("that only the API can order")),
        "{:?}",
        texts(&plain)
    );
    let coherent = run(&body("coherent "), 1, [2, 1, 1], &bufs);
    let out = &coherent.buffers[2];
    assert_eq!(coherent.status(out.word_taint(1)), WordStatus::Exact);
    assert_eq!(u32s(&out.bytes)[1], 1);
    // `before` races with the write either way (nothing orders it).
    assert!(matches!(
        coherent.status(out.word_taint(0)),
        WordStatus::Racy(_)
    ));
}

// Bad input: a pointer copied through thousands of `OpCopyObject`s (no compiler writes that; a
// fuzzer does) is traced back a bounded number of steps, then taken as non-private — the decoder
// neither recurses without end nor overflows its stack.
#[test]
fn a_pointer_copied_thousands_of_times_is_decoded_without_tracing_it_to_the_end() {
    use lockstep::kernel::{compile, SourceLang, SourceOptions};
    let copies: String = (1..=5000)
        .map(|k| format!("%p{k} = OpCopyObject %ptr %p{}\n", k - 1))
        .collect();
    let asm = format!(
        "OpCapability Shader\nOpMemoryModel Logical GLSL450\n\
         OpEntryPoint GLCompute %main \"main\"\nOpExecutionMode %main LocalSize 1 1 1\n\
         OpDecorate %arr ArrayStride 4\nOpMemberDecorate %B 0 Offset 0\nOpDecorate %B Block\n\
         OpDecorate %buf DescriptorSet 0\nOpDecorate %buf Binding 0\n\
         %void = OpTypeVoid\n%fn = OpTypeFunction %void\n%uint = OpTypeInt 32 0\n\
         %arr = OpTypeRuntimeArray %uint\n%B = OpTypeStruct %arr\n\
         %pB = OpTypePointer StorageBuffer %B\n%ptr = OpTypePointer StorageBuffer %uint\n\
         %buf = OpVariable %pB StorageBuffer\n%c0 = OpConstant %uint 0\n%c7 = OpConstant %uint 7\n\
         %main = OpFunction %void None %fn\n%l = OpLabel\n\
         %p0 = OpAccessChain %ptr %buf %c0 %c0\n{copies}OpStore %p5000 %c7\nOpReturn\nOpFunctionEnd\n"
    );
    let words = compile(&asm, SourceLang::SpirvAsm, &SourceOptions::default())
        .unwrap()
        .words;
    let k = decode(&words, &DecodeOptions::default()).unwrap();
    assert!(k.private.iter().all(|&p| p == 0), "taken as non-private");
    let r = run_words(&words, 1, [1, 1, 1], &[vec![0]]);
    assert_eq!(u32s(&r.buffers[0].bytes), [7]);
}

// A pointer that reaches a function through a parameter is judged as SPIRV-Tools' memory-model
// upgrade judges it (`UpgradeMemoryModel`, its `OpVariable`/`OpFunctionParameter` case): by the
// parameter's own `Coherent` and by what its pointer type reaches — not by what the caller passes.
// Invocation 0 stores through `put(&buf[0])`, a barrier with AcquireRelease | UniformMemory orders
// it, invocation 1 loads through `get(&buf[0])`: a race unless both parameters are coherent
// (Appendix B, Private vs. Non-Private: private accesses are location-ordered only by the API).
#[test]
fn a_pointer_parameter_is_private_unless_it_or_its_type_is_coherent() {
    use lockstep::kernel::{compile, SourceLang, SourceOptions};
    let asm = |deco: &str| {
        format!(
            "OpCapability Shader\nOpMemoryModel Logical GLSL450\n\
             OpEntryPoint GLCompute %main \"main\" %lid\nOpExecutionMode %main LocalSize 2 1 1\n\
             OpName %buf \"buf\"\nOpDecorate %lid BuiltIn LocalInvocationId\n\
             OpDecorate %arr ArrayStride 4\nOpMemberDecorate %blk 0 Offset 0\nOpDecorate %blk Block\n\
             OpDecorate %buf DescriptorSet 0\nOpDecorate %buf Binding 0\n{deco}\
             %void = OpTypeVoid\n%uint = OpTypeInt 32 0\n%bool = OpTypeBool\n\
             %v3 = OpTypeVector %uint 3\n%pin = OpTypePointer Input %v3\n%lid = OpVariable %pin Input\n\
             %arr = OpTypeRuntimeArray %uint\n%blk = OpTypeStruct %arr\n\
             %pb = OpTypePointer StorageBuffer %blk\n%buf = OpVariable %pb StorageBuffer\n\
             %pu = OpTypePointer StorageBuffer %uint\n%fn = OpTypeFunction %void\n\
             %putfn = OpTypeFunction %void %pu\n%getfn = OpTypeFunction %uint %pu\n\
             %u0 = OpConstant %uint 0\n%u1 = OpConstant %uint 1\n%u2 = OpConstant %uint 2\n\
             %u5 = OpConstant %uint 5\n%sem = OpConstant %uint 72\n\
             %put = OpFunction %void None %putfn\n%pp = OpFunctionParameter %pu\n%lp = OpLabel\n\
             OpStore %pp %u5\nOpReturn\nOpFunctionEnd\n\
             %get = OpFunction %uint None %getfn\n%gp = OpFunctionParameter %pu\n%lg = OpLabel\n\
             %v = OpLoad %uint %gp\nOpReturnValue %v\nOpFunctionEnd\n\
             %main = OpFunction %void None %fn\n%l = OpLabel\n\
             %id3 = OpLoad %v3 %lid\n%id = OpCompositeExtract %uint %id3 0\n\
             %slot = OpAccessChain %pu %buf %u0 %u0\n%is0 = OpIEqual %bool %id %u0\n\
             OpSelectionMerge %m1 None\nOpBranchConditional %is0 %w %m1\n\
             %w = OpLabel\n%c1 = OpFunctionCall %void %put %slot\nOpBranch %m1\n\
             %m1 = OpLabel\nOpControlBarrier %u2 %u2 %sem\n%is1 = OpIEqual %bool %id %u1\n\
             OpSelectionMerge %m2 None\nOpBranchConditional %is1 %r %m2\n\
             %r = OpLabel\n%got = OpFunctionCall %uint %get %slot\n\
             %out = OpAccessChain %pu %buf %u0 %u1\nOpStore %out %got\nOpBranch %m2\n\
             %m2 = OpLabel\nOpReturn\nOpFunctionEnd\n"
        )
    };
    for (deco, racy) in [
        ("", true),
        ("OpDecorate %pp Coherent\nOpDecorate %gp Coherent\n", false),
        ("OpDecorate %pp Volatile\nOpDecorate %gp Coherent\n", false),
        // the block's coherent member is not in the parameter's type (a pointer to `uint`): the
        // pass does not see it there, and neither does the decoder
        ("OpMemberDecorate %blk 0 Coherent\n", true),
        // one side coherent is not enough: both accesses must be non-private
        ("OpDecorate %pp Coherent\n", true),
        ("OpDecorate %gp Coherent\n", true),
    ] {
        let words = compile(&asm(deco), SourceLang::SpirvAsm, &SourceOptions::default())
            .unwrap()
            .words;
        let r = run_words(&words, 2, [1, 1, 1], &[vec![0; 2]]);
        let found = races(&r);
        let out = &r.buffers[0];
        if racy {
            assert!(
                found.iter().any(|(_, t)| t.contains("is not `coherent`")),
                "{deco}: {found:?}"
            );
            assert!(
                matches!(r.status(out.word_taint(1)), WordStatus::Racy(_)),
                "{deco}"
            );
        } else {
            assert!(found.is_empty(), "{deco}: {found:?}");
            assert_eq!(r.status(out.word_taint(1)), WordStatus::Exact, "{deco}");
            assert_eq!(u32s(&out.bytes), [5, 5], "{deco}");
        }
    }
}

// Appendix B, Private vs. Non-Private: "Atomic operations are always considered non-private", and
// SPIRV-Tools' upgrade: "Workgroup storage class is implicitly coherent". A shared variable and an
// atomic exchange need no `coherent`: the barrier orders them.
#[test]
fn workgroup_memory_and_atomics_are_non_private_without_coherent() {
    let r = run(
        "layout(local_size_x = 2) in;\n\
         layout(binding = 0) buffer B { uint a[2]; uint b[2]; };\n\
         shared uint s[2];\n\
         void main() {\n\
           uint i = gl_LocalInvocationID.x;\n\
           s[i] = i + 1;\n\
           atomicExchange(a[i], i + 3);\n\
           memoryBarrierBuffer();\n\
           barrier();\n\
           b[i] = s[1 - i] * 10 + atomicAdd(a[1 - i], 0);\n\
         }\n",
        2,
        [1, 1, 1],
        &[vec![0; 4]],
    );
    assert!(r.findings.is_empty(), "{:?}", texts(&r));
    assert_eq!(u32s(&r.buffers[0].bytes), [3, 4, 24, 13]);
}

// Appendix B, Data Race, the other way round: a control barrier whose memory semantics name only
// buffer memory (UniformMemory) does not order workgroup memory, so shared accesses on either side
// of it race; naming workgroup memory (WorkgroupMemory) orders them.
#[test]
fn a_barrier_for_buffer_memory_alone_leaves_shared_memory_unordered() {
    let body = |storage: &str| {
        format!(
            "layout(local_size_x = 2) in;\n\
             shared uint s[2];\n\
             layout(binding = 0) coherent buffer B {{ uint b[]; }};\n\
             void main() {{\n\
               uint i = gl_LocalInvocationID.x;\n\
               s[i] = i + 1;\n\
               controlBarrier(gl_ScopeWorkgroup, gl_ScopeWorkgroup, {storage}, gl_SemanticsAcquireRelease);\n\
               b[i] = s[1 - i];\n\
             }}\n"
        )
    };
    races_then_orders(
        body,
        ("gl_StorageSemanticsBuffer", "gl_StorageSemanticsShared"),
        &[2, 1],
    );
}

/// Two invocations each write their element of `b`, then `barrier` (statements), then each reads
/// the other's element into `b[2 + i]`.
fn swap_across(barrier: &str) -> String {
    format!(
        "layout(local_size_x = 2) in;\n\
         layout(binding = 0) coherent buffer B {{ uint b[]; }};\n\
         void main() {{\n\
           uint i = gl_LocalInvocationID.x;\n\
           b[i] = i + 1;\n\
           {barrier}\n\
           b[2 + i] = b[1 - i];\n\
         }}\n"
    )
}

/// The kernel `body(storage)` on one workgroup of 2, subgroup size 2: with `racy` a race is
/// reported; with `ordered` nothing is, and the buffer holds `want`.
fn races_then_orders(body: impl Fn(&str) -> String, (racy, ordered): (&str, &str), want: &[u32]) {
    let zeros = [vec![0; want.len()]];
    let r = run(&body(racy), 2, [1, 1, 1], &zeros);
    assert!(!races(&r).is_empty(), "{:?}", texts(&r));
    let o = run(&body(ordered), 2, [1, 1, 1], &zeros);
    assert!(o.findings.is_empty(), "{:?}", texts(&o));
    assert_eq!(u32s(&o.buffers[0].bytes), want);
}

// The same rule for a subgroup's control barrier (execution and memory scope Subgroup, GLSL
// `controlBarrier(gl_ScopeSubgroup, …)`): semantics naming only workgroup memory leave buffer
// accesses on either side of it unordered — a race within the subgroup; naming buffer memory
// (UniformMemory) orders them.
#[test]
fn a_subgroup_barrier_orders_only_the_storage_classes_its_semantics_name() {
    let body = |storage: &str| {
        swap_across(&format!(
            "controlBarrier(gl_ScopeSubgroup, gl_ScopeSubgroup, {storage}, gl_SemanticsAcquireRelease);"
        ))
    };
    races_then_orders(
        body,
        ("gl_StorageSemanticsShared", "gl_StorageSemanticsBuffer"),
        &[1, 2, 2, 1],
    );
}

// Appendix B, Data Race; the CTS's `compute_push_constant_and_ssbo` and graphicsfuzz files: every
// invocation stores the same value to one location. That is a data race, reported as such, in the
// class "same value": the value every order leaves is kept (issue 19, rule 4).
#[test]
fn racing_writes_of_one_value_are_a_same_value_race_and_keep_the_value() {
    let r = run(
        "layout(local_size_x = 8) in;\n\
         layout(binding = 0) coherent buffer B { uint b[]; };\n\
         void main() { b[0] = 42u; }\n",
        8,
        [2, 1, 1],
        &[vec![0; 1]],
    );
    let found = races(&r);
    assert!(!found.is_empty());
    assert!(
        found.iter().all(|(c, _)| *c == RaceClass::SameValue),
        "{found:?}"
    );
    assert_eq!(u32s(&r.buffers[0].bytes), [42]);
    assert_eq!(r.status(r.buffers[0].word_taint(0)), WordStatus::Exact);
}

// Appendix B, Data Race: two invocations writing different values race, and what is left is
// undefined.
#[test]
fn racing_writes_of_different_values_leave_an_undefined_value() {
    let r = run(
        "layout(local_size_x = 8) in;\n\
         layout(binding = 0) coherent buffer B { uint b[]; };\n\
         void main() { b[0] = gl_LocalInvocationID.x; }\n",
        8,
        [1, 1, 1],
        &[vec![0; 1]],
    );
    assert!(races(&r).iter().any(|(c, _)| *c == RaceClass::Value));
    assert!(matches!(
        r.status(r.buffers[0].word_taint(0)),
        WordStatus::Racy(_)
    ));
}

// Appendix B, Synchronizes-With: a release store of a flag by one workgroup, read by an acquire
// load in another, orders the data written before the release before the reads after the acquire;
// AcquireRelease semantics are both (read-modify-writes on either side). It takes both halves:
// without the release (the writer's side) or without the acquire (the reader's), and with relaxed
// atomics on both sides, the data accesses race.
#[test]
fn a_release_acquire_pair_orders_data_between_workgroups_and_either_half_alone_does_not() {
    const SEM: &str = "gl_ScopeDevice, gl_StorageSemanticsBuffer";
    let run_with = |write: &str, read: &str| {
        let body = format!(
            "layout(local_size_x = 1) in;\n\
             layout(binding = 0) coherent buffer B {{ uint data; uint flag; uint out_[]; }};\n\
             void main() {{\n\
               if (gl_WorkGroupID.x == 0) {{\n\
                 data = 5u;\n\
                 {write};\n\
               }} else {{\n\
                 uint f = {read};\n\
                 if (f == 1u) {{ out_[0] = data; }}\n\
               }}\n\
             }}\n"
        );
        run(&body, 1, [2, 1, 1], &[vec![0; 3]])
    };
    let store = |sem: &str| format!("atomicStore(flag, 1u, {SEM}, {sem})");
    let load = |sem: &str| format!("atomicLoad(flag, {SEM}, {sem})");
    let acq_rel = "gl_SemanticsAcquireRelease";
    for (write, read) in [
        (store("gl_SemanticsRelease"), load("gl_SemanticsAcquire")),
        (
            format!("atomicExchange(flag, 1u, {SEM}, {acq_rel})"),
            format!("atomicAdd(flag, 0u, {SEM}, {acq_rel})"),
        ),
    ] {
        let r = run_with(&write, &read);
        assert!(races(&r).is_empty(), "{write}, {read}: {:?}", texts(&r));
    }
    // Either half relaxed; or either half of a scope (Workgroup) that leaves the other
    // workgroup out: "A and B are in each other's scope" fails.
    let wg = "gl_ScopeWorkgroup, gl_StorageSemanticsBuffer";
    for (write, read) in [
        (store("gl_SemanticsRelaxed"), load("gl_SemanticsRelaxed")),
        (store("gl_SemanticsRelease"), load("gl_SemanticsRelaxed")),
        (store("gl_SemanticsRelaxed"), load("gl_SemanticsAcquire")),
        (
            format!("atomicStore(flag, 1u, {wg}, gl_SemanticsRelease)"),
            load("gl_SemanticsAcquire"),
        ),
        (
            store("gl_SemanticsRelease"),
            format!("atomicLoad(flag, {wg}, gl_SemanticsAcquire)"),
        ),
    ] {
        let r = run_with(&write, &read);
        let found = races(&r);
        assert!(
            found
                .iter()
                .any(|(_, t)| t.contains("wrote at k.comp:9") && t.contains("read at k.comp:13")),
            "{write}, {read}: {found:?}"
        );
    }
}

// Appendix B: atomics are not data races with each other; but what an atomic returns depends on
// the order the invocations ran in, and a store through an index it returned must be performed —
// the element it lands on holds an order-dependent value, the counter a defined one (issue 19,
// rule 6).
#[test]
fn a_store_through_an_index_an_atomic_returned_is_performed() {
    let r = run(
        "layout(local_size_x = 4) in;\n\
         layout(binding = 0) coherent buffer C { uint count; };\n\
         layout(binding = 1) coherent buffer O { uint o[]; };\n\
         void main() { o[atomicAdd(count, 1u)] = 10u + gl_GlobalInvocationID.x; }\n",
        4,
        [2, 1, 1],
        &[vec![0; 1], vec![0; 8]],
    );
    assert!(r.findings.is_empty(), "{:?}", texts(&r));
    let c = r.buffers.iter().find(|b| b.binding == 0).unwrap();
    assert_eq!(u32s(&c.bytes), [8]);
    assert_eq!(r.status(c.word_taint(0)), WordStatus::Exact);
    let o = r.buffers.iter().find(|b| b.binding == 1).unwrap();
    let mut got = u32s(&o.bytes);
    got.sort();
    assert_eq!(got, (10..18).collect::<Vec<u32>>());
    for i in 0..8 {
        assert!(matches!(
            r.status(o.word_taint(i)),
            WordStatus::OrderDependent(_)
        ));
    }
}

// Appendix B: branching on an atomic's result (a ticket) is legal; the path is this execution's,
// not a lost one — no finding, and what the branch wrote is order-dependent, not undefined.
#[test]
fn a_branch_on_an_atomics_result_is_followed_not_lost() {
    let r = run(
        "layout(local_size_x = 4) in;\n\
         layout(binding = 0) coherent buffer C { uint count; uint winner; };\n\
         void main() { if (atomicAdd(count, 1u) == 0u) { winner = 7u; } }\n",
        4,
        [1, 1, 1],
        &[vec![0; 2]],
    );
    assert!(r.findings.is_empty(), "{:?}", texts(&r));
    assert_eq!(u32s(&r.buffers[0].bytes), [4, 7]);
    assert!(matches!(
        r.status(r.buffers[0].word_taint(1)),
        WordStatus::OrderDependent(_)
    ));
}

// Appendix B: an invocation's path through a branch on an atomic's result is one order's; in
// another order it goes the other way. A variable of its own that a path of the branch stores to
// holds what its path left — order-dependent for the invocations that skipped the store as much as
// for those that made it (here lanes 2 and 3 skip `ok = false`, but in another order one of them
// gets ticket 0 and makes it).
#[test]
fn a_store_an_invocation_skipped_on_a_branch_an_atomic_decided_leaves_its_variable_order_dependent()
{
    let r = run(
        "layout(local_size_x = 4) in;\n\
         layout(binding = 0) coherent buffer C { uint count; };\n\
         layout(binding = 1) coherent buffer O { uint o[4]; };\n\
         void main() { uint v = atomicAdd(count, 1u); bool ok = true; if (v < 2u) { ok = false; } o[gl_LocalInvocationID.x] = ok ? 5u : 7u; }\n",
        4,
        [1, 1, 1],
        &[vec![0; 1], vec![0; 4]],
    );
    let o = r.buffers.iter().find(|b| b.binding == 1).unwrap();
    assert_eq!(u32s(&o.bytes), [7, 7, 5, 5]);
    for i in 0..4 {
        assert!(
            matches!(r.status(o.word_taint(i)), WordStatus::OrderDependent(_)),
            "o[{i}]: {:?}",
            r.status(o.word_taint(i))
        );
    }
}

// Vulkan, "Compute Shaders" / Appendix B: workgroups of a dispatch run in no order the API gives,
// and atomics of different workgroups are ordered by nothing but the device. One invocation of each
// of two workgroups (the second of each: not the first slot of the dispatch) takes a ticket from
// one counter: which gets 0 is the device's choice, so each ticket is order-dependent, while the
// counter ends at 2 in every order.
#[test]
fn tickets_two_workgroups_take_from_one_counter_are_order_dependent() {
    let r = run(
        "layout(local_size_x = 2) in;\n\
         layout(binding = 0) coherent buffer C { uint count; };\n\
         layout(binding = 1) coherent buffer O { uint o[2]; };\n\
         void main() { if (gl_LocalInvocationID.x == 1u) { o[gl_WorkGroupID.x] = atomicAdd(count, 1u); } }\n",
        2,
        [2, 1, 1],
        &[vec![0; 1], vec![9; 2]],
    );
    let c = r.buffers.iter().find(|b| b.binding == 0).unwrap();
    assert_eq!(u32s(&c.bytes), [2]);
    assert_eq!(r.status(c.word_taint(0)), WordStatus::Exact);
    let o = r.buffers.iter().find(|b| b.binding == 1).unwrap();
    let mut got = u32s(&o.bytes);
    got.sort();
    assert_eq!(got, [0, 1]);
    for w in 0..2 {
        assert!(
            matches!(r.status(o.word_taint(w)), WordStatus::OrderDependent(_)),
            "workgroup {w}'s ticket: {:?}",
            r.status(o.word_taint(w))
        );
    }
    // The second workgroup's ticket is explained by the first workgroup's atomic: another
    // workgroup's write, not another invocation's of its own.
    match r.status(o.word_taint(1)) {
        WordStatus::OrderDependent(chain) => assert!(
            chain.contains("another workgroup"),
            "the second workgroup's ticket: {chain}"
        ),
        other => panic!("{other:?}"),
    }
    // Four invocations of one workgroup take tickets: each is explained by the order of the
    // invocations' atomics, none by another workgroup.
    let r = run(
        "layout(local_size_x = 4) in;\n\
         layout(binding = 0) coherent buffer C { uint count; };\n\
         layout(binding = 1) coherent buffer O { uint o[4]; };\n\
         void main() { o[gl_LocalInvocationID.x] = atomicAdd(count, 1u); }\n",
        4,
        [1, 1, 1],
        &[vec![0; 1], vec![9; 4]],
    );
    let o = r.buffers.iter().find(|b| b.binding == 1).unwrap();
    for w in 0..4 {
        match r.status(o.word_taint(w)) {
            WordStatus::OrderDependent(chain) => assert!(
                chain.contains("the order invocations ran it in")
                    && !chain.contains("another workgroup"),
                "invocation {w}'s ticket: {chain}"
            ),
            other => panic!("invocation {w}'s ticket: {other:?}"),
        }
    }
}

// SPIR-V, "Atomic Instructions": an atomic returns the value its location held just before it, one
// of the values the location's modification order gives it — a defined value another order may
// change, never an undefined one. Stores move that value without changing what it is: copied
// through shared memory seventy times (more links than a finding's chain shows, 64), it is still
// order-dependent, with the stores it travelled through named.
#[test]
fn an_order_dependent_value_stays_order_dependent_however_many_stores_it_travels_through() {
    let r = run(
        "layout(local_size_x = 2) in;\n\
         layout(binding = 0) coherent buffer C { uint count; };\n\
         layout(binding = 1) coherent buffer O { uint o[2]; };\n\
         shared uint s[2];\n\
         void main() { uint i = gl_LocalInvocationID.x;\n\
           s[i] = atomicAdd(count, 1u);\n\
           for (int k = 0; k < 70; k++) { s[i] = s[i] + 1u; }\n\
           o[i] = s[i]; }\n",
        2,
        [1, 1, 1],
        &[vec![0; 1], vec![0; 2]],
    );
    let o = r.buffers.iter().find(|b| b.binding == 1).unwrap();
    let mut got = u32s(&o.bytes);
    got.sort();
    assert_eq!(got, [70, 71]);
    for w in 0..2 {
        match r.status(o.word_taint(w)) {
            WordStatus::OrderDependent(chain) => {
                assert!(chain.contains("OpStore"), "o[{w}]: {chain}")
            }
            other => panic!("o[{w}] after 71 stores: {other:?}"),
        }
    }
}

// SPIR-V, "Atomic Instructions": each atomic is one indivisible read-modify-write; the order of
// unordered ones is the device's. The memory they leave is defined when every order gives one
// value: adds that stay below the bits the ors set (no carry can reach them) commute with those
// ors; an add and an or that share bit 0 do not — `(0 + 1) | 1 = 1`, `(0 | 1) + 1 = 2` — even in
// the order where the or left the value unchanged. Stores of one value commute; of two, not.
#[test]
fn unordered_atomics_of_two_kinds_are_defined_only_where_every_order_gives_one_value() {
    let r = run(
        "layout(local_size_x = 2) in;\n\
         layout(binding = 0) coherent buffer B { uint apart; uint meet; uint flag; uint last; };\n\
         void main() { uint i = gl_LocalInvocationID.x;\n\
           if (i == 0u) { atomicAdd(apart, 5u); atomicAdd(meet, 1u); atomicExchange(flag, 1u); atomicExchange(last, 1u); }\n\
           else { atomicOr(apart, 1u << 31); atomicOr(meet, 1u); atomicExchange(flag, 1u); atomicExchange(last, 2u); } }\n",
        4,
        [1, 1, 1],
        &[vec![0; 4]],
    );
    let b = &r.buffers[0];
    assert_eq!(u32s(&b.bytes)[..3], [0x8000_0005, 1, 1]);
    assert_eq!(r.status(b.word_taint(0)), WordStatus::Exact);
    assert!(matches!(
        r.status(b.word_taint(1)),
        WordStatus::OrderDependent(_)
    ));
    assert_eq!(r.status(b.word_taint(2)), WordStatus::Exact);
    assert!(matches!(
        r.status(b.word_taint(3)),
        WordStatus::OrderDependent(_)
    ));
    // An add whose carry could reach an or's bit: 0x7fffffff + 1 meets bit 31.
    let r = run(
        "layout(local_size_x = 2) in;\n\
         layout(binding = 0) coherent buffer B { uint x; };\n\
         void main() { if (gl_LocalInvocationID.x == 0u) atomicAdd(x, 1u); else atomicOr(x, 1u << 31); }\n",
        4,
        [1, 1, 1],
        &[vec![0x7fff_ffff]],
    );
    assert!(matches!(
        r.status(r.buffers[0].word_taint(0)),
        WordStatus::OrderDependent(_)
    ));
}

// Appendix B, Data Race: readers before a barrier are ordered before every access after it; one
// invocation reading and writing after the barrier races with nobody (issue 19, rule 7).
#[test]
fn readers_before_a_barrier_do_not_race_with_a_writer_after_it() {
    let r = run(
        "layout(local_size_x = 8) in;\n\
         layout(binding = 0) coherent buffer B { uint b[]; };\n\
         shared uint s;\n\
         void main() {\n\
           if (gl_LocalInvocationID.x == 0) { s = 3u; }\n\
           barrier();\n\
           b[gl_LocalInvocationID.x] = s;\n\
           barrier();\n\
           if (gl_LocalInvocationID.x == 5) { s = s + 1u; b[8] = s; }\n\
         }\n",
        8,
        [1, 1, 1],
        &[vec![0; 9]],
    );
    assert!(r.findings.is_empty(), "{:?}", texts(&r));
    assert_eq!(u32s(&r.buffers[0].bytes)[8], 4);
}

// The other party of a race is an invocation that made the conflicting access (issue 19, rule 7):
// invocation 2 writes what invocations 0 and 1 read; the report names a reader, never the writer
// itself.
#[test]
fn the_other_party_of_a_race_is_an_invocation_that_made_the_access() {
    let r = run(
        "layout(local_size_x = 4) in;\n\
         layout(binding = 0) coherent buffer B { uint b[]; };\n\
         shared uint s;\n\
         void main() {\n\
           uint i = gl_LocalInvocationID.x;\n\
           if (i == 0) { s = 1u; }\n\
           barrier();\n\
           if (i < 2) { b[i] = s; }\n\
           if (i == 2) { s = 9u; }\n\
         }\n",
        4,
        [1, 1, 1],
        &[vec![0; 4]],
    );
    let found: Vec<&Finding> = r
        .findings
        .iter()
        .filter(|f| matches!(f, Finding::Race { .. }))
        .collect();
    assert!(!found.is_empty());
    for f in found {
        if let Finding::Race { a, b, .. } = f {
            assert_ne!(a.0, b.0, "{}", r.finding_text(f));
            assert!(a.0 < 2 && b.0 == 2, "{}", r.finding_text(f));
        }
    }
}

// Appendix B, Agent: "if an instruction is skipped due to control flow, it does not constitute an
// operation" — a store that never runs is no race and no out-of-bounds access (the CTS's
// `unexecuted_oob_*`).
#[test]
fn a_store_in_code_that_never_runs_is_no_race() {
    let r = run(
        "layout(local_size_x = 4) in;\n\
         layout(binding = 0) coherent buffer B { uint n; uint b[]; };\n\
         void main() {\n\
           uint i = gl_GlobalInvocationID.x;\n\
           if (i > n) { b[0] = i; b[100000] = i; }\n\
           b[1 + i] = i;\n\
         }\n",
        4,
        [2, 1, 1],
        &[vec![100, 0, 0, 0, 0, 0, 0, 0, 0, 0]],
    );
    assert!(r.findings.is_empty(), "{:?}", texts(&r));
}

// GLSL.std.450 Ldexp: "x * 2^exp"; the exponent is an integer of any width (Int8/16/64 with the
// extended types) and must be read at its own width: -1 as a 64-bit or 16-bit integer is -1.
#[test]
fn ldexp_reads_exponents_of_every_width_as_signed() {
    let r = run(
        "layout(local_size_x = 1) in;\n\
         layout(binding = 0) coherent buffer B { float f[]; };\n\
         void main() {\n\
           int64_t e64 = int64_t(-1) - int64_t(f[4]);\n\
           int16_t e16 = int16_t(-2);\n\
           int8_t e8 = int8_t(-3);\n\
           f[0] = ldexp(8.0, int(e64));\n\
           f[1] = ldexp(-8.0, e16);\n\
           f[2] = ldexp(8.0, e8);\n\
           f[3] = ldexp(-0.0, int(-e64));\n\
         }\n",
        1,
        [1, 1, 1],
        &[vec![0, 0, 0, 0, 0]],
    );
    let f: Vec<f32> = r.buffers[0]
        .bytes
        .chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(f[..3], [4.0, -2.0, 1.0]);
    assert_eq!(f[3].to_bits(), (-0.0f32).to_bits());
}

fn race_groups(r: &ModelRun) -> Vec<(String, u64)> {
    r.groups
        .iter()
        .filter(|g| matches!(g.examples.first(), Some(Finding::Race { .. })))
        .map(|g| (r.group_text(g).0, g.count))
        .collect()
}

// Appendix B, Data Race, on the three bugs real kernels have: a missing barrier, every invocation
// storing one value, and shared memory reused without a barrier. Each is reported once per
// (variable, pair of lines), with both lines; the fixed kernels report nothing. (Lines count the
// four header lines `run` puts before the body.)
#[test]
fn real_races_are_reported_once_per_variable_and_line_pair_and_their_fixes_are_clean() {
    let reduce = |fence: &str| {
        format!(
            "layout(local_size_x = 16) in;\n\
             layout(binding = 0) coherent buffer B {{ uint data[]; }};\n\
             shared uint partial[16];\n\
             void main() {{\n\
               uint i = gl_LocalInvocationID.x;\n\
               partial[i] = data[i];\n\
               {fence}\n\
               for (uint stride = 8u; stride > 0u; stride /= 2u) {{\n\
                 if (i < stride) {{ partial[i] += partial[i + stride]; }}\n\
                 barrier();\n\
               }}\n\
               if (i == 0u) {{ data[16] = partial[0]; }}\n\
             }}\n"
        )
    };
    let input: Vec<u32> = (0..17).collect();
    let bad = run(&reduce(""), 4, [1, 1, 1], std::slice::from_ref(&input));
    let groups = race_groups(&bad);
    assert_eq!(groups.len(), 1, "{groups:?}");
    assert!(
        groups[0]
            .0
            .contains("race on partial: wrote at k.comp:10 and read at k.comp:13"),
        "{groups:?}"
    );
    let good = run(
        &reduce("barrier();"),
        4,
        [1, 1, 1],
        std::slice::from_ref(&input),
    );
    assert!(good.findings.is_empty(), "{:?}", texts(&good));
    assert_eq!(u32s(&good.buffers[0].bytes)[16], (0..16).sum::<u32>());

    let flag = |guard: &str| {
        format!(
            "layout(local_size_x = 8) in;\n\
             layout(binding = 0) coherent buffer B {{ uint done; }};\n\
             void main() {{\n\
               {guard} done = 1u;\n\
             }}\n"
        )
    };
    let bad = run(&flag(""), 8, [1, 1, 1], &[vec![0]]);
    let groups = race_groups(&bad);
    assert_eq!(groups.len(), 1, "{groups:?}");
    assert!(
        groups[0]
            .0
            .starts_with("same-value race on done: wrote at k.comp:8 and wrote at k.comp:8"),
        "{groups:?}"
    );
    let good = run(
        &flag("if (gl_LocalInvocationID.x == 0u)"),
        8,
        [1, 1, 1],
        &[vec![0]],
    );
    assert!(good.findings.is_empty(), "{:?}", texts(&good));

    let reuse = |fence: &str| {
        format!(
            "layout(local_size_x = 8) in;\n\
             layout(binding = 0) coherent buffer B {{ uint data[]; }};\n\
             shared uint tile[8];\n\
             void main() {{\n\
               uint i = gl_LocalInvocationID.x;\n\
               tile[i] = data[i];\n\
               barrier();\n\
               uint a = tile[7u - i];\n\
               {fence}\n\
               tile[i] = a * 2u;\n\
               barrier();\n\
               data[8u + i] = tile[7u - i];\n\
             }}\n"
        )
    };
    let input: Vec<u32> = (0..16).collect();
    let bad = run(&reuse(""), 8, [1, 1, 1], std::slice::from_ref(&input));
    let groups = race_groups(&bad);
    assert_eq!(groups.len(), 1, "{groups:?}");
    assert!(
        groups[0]
            .0
            .contains("race on tile: read at k.comp:12 and wrote at k.comp:14"),
        "{groups:?}"
    );
    let good = run(
        &reuse("barrier();"),
        8,
        [1, 1, 1],
        std::slice::from_ref(&input),
    );
    assert!(good.findings.is_empty(), "{:?}", texts(&good));
    assert_eq!(
        u32s(&good.buffers[0].bytes)[8..],
        [0, 2, 4, 6, 8, 10, 12, 14]
    );
}

// The same run gives the same findings (issue 19, rule 8): the groups, their counts and their
// first occurrences do not depend on how many threads ran the workgroups, in parallel runs and in
// runs redone in order.
#[test]
fn the_same_run_gives_the_same_findings_whatever_the_thread_count() {
    let kernels = [
        // races between workgroups: the ordered run
        "layout(local_size_x = 8) in;\n\
         layout(binding = 0) coherent buffer B { uint b[]; };\n\
         void main() { uint i = gl_GlobalInvocationID.x; b[i % 7u] = b[(i + 3u) % 11u] + i; }\n",
        // races inside each workgroup only: the parallel run
        "layout(local_size_x = 8) in;\n\
         layout(binding = 0) coherent buffer B { uint b[]; };\n\
         shared uint s[8];\n\
         void main() { uint i = gl_LocalInvocationID.x; s[i] = i; b[gl_GlobalInvocationID.x] = s[(i + 1u) % 8u]; }\n",
    ];
    for k in kernels {
        let mut seen: Option<(Vec<FindingGroup>, Vec<u8>)> = None;
        for threads in [1, 2, 3, 4] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let r = pool.install(|| run(k, 4, [16, 1, 1], &[vec![1; 128]]));
            assert!(!r.groups.is_empty());
            let got = (r.groups.clone(), r.buffers[0].bytes.clone());
            match &seen {
                None => seen = Some(got),
                Some(s) => assert_eq!(*s, got, "{threads} threads"),
            }
        }
    }
}

// Vulkan spec, "Shader Invocation Progress"/Appendix B: nothing guarantees that another workgroup
// runs while one waits for it. A loop whose exit waits for what another workgroup writes
// (decoupled look-back) is reported as a spin-wait; when the awaited workgroup comes later in the
// model's schedule, the loop never ends: the run stops naming the rule instead of hanging.
#[test]
fn a_spin_wait_on_another_workgroup_is_a_finding_not_a_hang() {
    let body = |on: &str| {
        format!(
            "layout(local_size_x = 1) in;\n\
             layout(binding = 0) coherent buffer B {{ uint flag[]; }};\n\
             void main() {{\n\
               uint k = gl_WorkGroupID.x;\n\
               if ({on}) {{\n\
                 while (atomicLoad(flag[OTHER], gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsAcquire) == 0u) {{}}\n\
               }}\n\
               atomicStore(flag[k], 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelease);\n\
             }}\n"
        )
    };
    // Each workgroup waits for the one before it: done in the model's order, still a hazard.
    let back = body("k > 0u").replace("OTHER", "k - 1u");
    let r = run(&back, 1, [4, 1, 1], &[vec![0; 4]]);
    let waits: Vec<String> = r
        .findings
        .iter()
        .filter(|f| matches!(f, Finding::SpinWait { stuck: false, .. }))
        .map(|f| r.finding_text(f))
        .collect();
    assert!(!waits.is_empty(), "{:?}", texts(&r));
    assert!(
        waits[0].contains("no forward-progress guarantee"),
        "{waits:?}"
    );
    assert_eq!(u32s(&r.buffers[0].bytes), [1, 1, 1, 1]);
    // Each waits for the one after it: in order, the first waits forever.
    let ahead = body("k < 3u").replace("OTHER", "k + 1u");
    let src = format!(
        "#version 450\n#extension GL_KHR_memory_scope_semantics : enable\n#extension GL_EXT_shader_explicit_arithmetic_types : enable\n#extension GL_KHR_shader_subgroup_basic : enable\n{ahead}"
    );
    let k = decode(&glsl(&src, "k.comp"), &DecodeOptions::default()).unwrap();
    let buf = BufferInput {
        set: 0,
        binding: 0,
        bytes: bytes_u32(&[0; 4]),
        ..Default::default()
    };
    match run_model(&k, cfg(1, [4, 1, 1]), &[buf], None) {
        Err(SpirvError::Stopped { why, .. }) => {
            assert!(why.contains("no forward-progress guarantee"), "{why}")
        }
        other => panic!("{:?}", other.map(|r| texts(&r))),
    }
}

// Appendix B and "Shader Invocation Progress": other legal orders of the workgroups
// (`--schedules`): a look-back chain that ends when workgroups run in order never ends when a later
// one runs first — a finding of the other schedule, while the first schedule's values stand.
#[test]
fn other_schedules_find_the_order_a_spin_wait_never_survives() {
    let src = "#version 450\n#extension GL_KHR_memory_scope_semantics : enable\nlayout(local_size_x = 1) in;\nlayout(binding = 0) coherent buffer B { uint flag[]; };\nvoid main() {\n  uint k = gl_WorkGroupID.x;\n  if (k > 0u) {\n    while (atomicLoad(flag[k - 1u], gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsAcquire) == 0u) {}\n  }\n  atomicStore(flag[k], 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelease);\n}\n";
    let k = decode(&glsl(src, "k.comp"), &DecodeOptions::default()).unwrap();
    let buf = BufferInput {
        set: 0,
        binding: 0,
        bytes: bytes_u32(&[0; 8]),
        ..Default::default()
    };
    let one = run_model(
        &k,
        cfg_schedules(1, [8, 1, 1], 1),
        std::slice::from_ref(&buf),
        None,
    )
    .unwrap();
    assert!(!one
        .findings
        .iter()
        .any(|f| matches!(f, Finding::SpinWait { stuck: true, .. })));
    let four = run_model(&k, cfg_schedules(1, [8, 1, 1], 4), &[buf], None).unwrap();
    assert!(
        four.findings
            .iter()
            .any(|f| matches!(f, Finding::SpinWait { stuck: true, .. })),
        "{:?}",
        texts(&four)
    );
    assert_eq!(u32s(&four.buffers[0].bytes), [1; 8]);
}

// Issue 19 §8: "A store's line is the line of the store": the statement's line, even where the
// compiler gives further lines (a declaration's, an argument's on a later line of a statement
// written over several lines) before the store. glslang gives `pair[…] = uvec2(` line 9, then the
// arguments' lines 10 and 11, then the OpStore; the race names line 9, where the statement is.
#[test]
fn a_store_is_reported_at_its_statements_line_not_at_a_later_line_of_it() {
    let body = "layout(local_size_x = 8) in;\n\
                layout(binding = 0) coherent buffer B { uint data[]; };\n\
                shared uvec2 pair[8];\n\
                void main() {\n\
                  uint i = gl_LocalInvocationID.x;\n\
                  pair[(i + 1u) % 8u] = uvec2(\n\
                      i,\n\
                      i + 1u);\n\
                  uint v =\n\
                      pair[i].x;\n\
                  data[i] = v;\n\
                }\n";
    let r = run(body, 8, [1, 1, 1], &[vec![0; 8]]);
    let groups = race_groups(&r);
    assert!(!groups.is_empty());
    // Header (4 lines) + body: the store's statement starts on line 10, the read is on line 14
    // (every group: the races that store a value the reader also sees are classified apart).
    for (g, _) in &groups {
        assert!(
            g.contains("race on pair: wrote at k.comp:10 and read at k.comp:14"),
            "{groups:?}"
        );
    }
}

// `RunConfig::race_checks` (the switch the interpreter benchmark measures the race shadow with):
// with the checks on, a shared-memory race (Appendix B, Data Race: a write and a read of one
// location by two invocations with no barrier between them) is found and the value read is
// undefined; with them off, nothing is found and the run is otherwise the same run — on a
// race-free kernel (a barrier between the write and the read) the two give the same bytes and
// the same statuses.
#[test]
fn race_checks_off_find_no_race_and_change_nothing_else() {
    let src = |barrier: &str| {
        format!(
            "#version 450\nlayout(local_size_x = 8) in;\n\
             layout(binding = 0) coherent buffer B {{ uint b[]; }};\n\
             shared uint s[8];\n\
             void main() {{\n\
               uint i = gl_LocalInvocationID.x;\n\
               s[i] = i * 3u;\n\
               {barrier}\n\
               b[i] = s[(i + 1u) % 8u];\n\
             }}\n"
        )
    };
    let go = |barrier: &str, checks: bool| {
        let k = decode(&glsl(&src(barrier), "k.comp"), &DecodeOptions::default()).unwrap();
        let mut c = cfg(4, [1, 1, 1]);
        c.race_checks = checks;
        let buf = BufferInput {
            set: 0,
            binding: 0,
            bytes: bytes_u32(&[0; 8]),
            ..Default::default()
        };
        run_model(&k, c, &[buf], None).unwrap()
    };
    let racy = go("", true);
    assert!(!races(&racy).is_empty(), "the checks find the race");
    assert!((0..8).any(|i| matches!(
        racy.status(racy.buffers[0].word_taint(i)),
        WordStatus::Racy(_) | WordStatus::Undefined(_)
    )));
    let blind = go("", false);
    assert!(races(&blind).is_empty(), "{:?}", texts(&blind));
    let (on, off) = (go("barrier();", true), go("barrier();", false));
    assert!(on.findings.is_empty() && off.findings.is_empty());
    assert_eq!(on.buffers[0].bytes, off.buffers[0].bytes);
    let want: Vec<u32> = (0..8).map(|i| ((i + 1) % 8) * 3).collect();
    assert_eq!(u32s(&on.buffers[0].bytes), want);
    for i in 0..8 {
        assert_eq!(on.status(on.buffers[0].word_taint(i)), WordStatus::Exact);
        assert_eq!(off.status(off.buffers[0].word_taint(i)), WordStatus::Exact);
    }
}

// Appendix B, Data Race: two atomic accesses whose scopes include each other are not a data race;
// Scoped Modification Order: the atomic read-modify-writes of one location happen in one total
// order, each reading what the one before it wrote. Integer adds (or mins, ors, …) of one kind
// leave the same value in every such order, so when nothing reads what they return the parallel
// run's buffers are the ordered run's: the workgroups need not run again in order. Expected counts
// come from the rule (each invocation adds 1 to bin `i % 7`), not from the interpreter.
#[test]
fn commuting_device_atomics_nobody_reads_leave_one_value_without_an_ordered_rerun() {
    let body = |use_result: bool| {
        format!(
            "layout(local_size_x = 16) in;\n\
             layout(binding = 0) coherent buffer B {{ uint bins[7]; uint seen; uint lo; }};\n\
             void main() {{ uint i = gl_GlobalInvocationID.x;\n\
               {}atomicAdd(bins[i % 7u], 1u);\n\
               atomicMin(lo, 1000u - i);\n\
               {}\n\
             }}\n",
            if use_result { "uint old = " } else { "" },
            if use_result {
                "if (old > 1000000u) { seen = 1u; }"
            } else {
                ""
            }
        )
    };
    let invocations = 16 * 5u32;
    let mut want = [0u32; 7];
    for i in 0..invocations {
        want[(i % 7) as usize] += 1;
    }
    let start = || {
        let mut b = vec![0u32; 9];
        b[8] = u32::MAX;
        b
    };
    let free = run(&body(false), 8, [5, 1, 1], &[start()]);
    assert!(free.findings.is_empty(), "{:?}", texts(&free));
    assert!(!free.ordered, "commuting atomics alone need no ordered run");
    let b = &free.buffers[0];
    assert_eq!(u32s(&b.bytes)[..7], want);
    assert_eq!(u32s(&b.bytes)[8], 1000 - (invocations - 1));
    for w in [0, 1, 2, 3, 4, 5, 6, 8] {
        assert_eq!(free.status(b.word_taint(w)), WordStatus::Exact, "word {w}");
    }
    // Reading what the add returned: the order matters to that invocation, and the dispatch runs
    // again in order — with the same buffers.
    let read = run(&body(true), 8, [5, 1, 1], &[start()]);
    assert!(
        read.ordered,
        "a returned value that is read needs the ordered run"
    );
    assert_eq!(read.buffers[0].bytes, free.buffers[0].bytes);
}

// Appendix B, Memory Location and Data Race: accesses to different locations never conflict, so
// workgroups that each write words of their own need no order between them — the model runs them
// in parallel; workgroups that write the same words race, and the dispatch runs again in order
// with the full race shadow.
#[test]
fn workgroups_writing_their_own_words_run_in_parallel_and_ones_writing_the_same_words_in_order() {
    let kernel = |index: &str| {
        format!(
            "layout(local_size_x = 8) in;\n\
             layout(binding = 0) coherent buffer B {{ uint b[]; }};\n\
             void main() {{ b[{index}] = 3u * gl_GlobalInvocationID.x + 1u; }}\n"
        )
    };
    let own = run(
        &kernel("gl_GlobalInvocationID.x"),
        8,
        [4, 1, 1],
        &[vec![0; 32]],
    );
    assert!(own.findings.is_empty(), "{:?}", texts(&own));
    assert!(!own.ordered, "words of their own need no ordered run");
    let want: Vec<u32> = (0..32).map(|i| 3 * i + 1).collect();
    assert_eq!(u32s(&own.buffers[0].bytes), want);
    for w in 0..32 {
        assert_eq!(own.status(own.buffers[0].word_taint(w)), WordStatus::Exact);
    }
    let same = run(
        &kernel("gl_LocalInvocationID.x"),
        8,
        [4, 1, 1],
        &[vec![0; 8]],
    );
    assert!(
        same.ordered,
        "writes of one word from two workgroups need the ordered run"
    );
    assert!(!races(&same).is_empty(), "{:?}", texts(&same));
}

// Appendix B, Data Race: an atomic and a plain access to one location from different workgroups,
// with no happens-before between them, race; atomics of two kinds on one location may leave a
// value that depends on their order; atomics whose scope (Workgroup) does not include the other
// workgroup's invocation are not atomic with respect to it. None of these may take the parallel
// run's shortcut.
#[test]
fn atomics_that_meet_a_plain_access_another_kind_or_a_narrower_scope_run_in_order() {
    let plain = run(
        "layout(local_size_x = 1) in;\n\
         layout(binding = 0) coherent buffer B { uint x; uint y; };\n\
         void main() { if (gl_WorkGroupID.x == 0u) atomicAdd(x, 1u); else y = x; }\n",
        1,
        [2, 1, 1],
        &[vec![0; 2]],
    );
    assert!(plain.ordered);
    assert!(!races(&plain).is_empty(), "{:?}", texts(&plain));
    let kinds = run(
        "layout(local_size_x = 1) in;\n\
         layout(binding = 0) coherent buffer B { uint x; };\n\
         void main() { if (gl_WorkGroupID.x == 0u) atomicAdd(x, 1u); else atomicOr(x, 1u); }\n",
        1,
        [2, 1, 1],
        &[vec![0]],
    );
    assert!(kinds.ordered);
    assert!(matches!(
        kinds.status(kinds.buffers[0].word_taint(0)),
        WordStatus::OrderDependent(_)
    ));
    let narrow = run(
        "layout(local_size_x = 1) in;\n\
         layout(binding = 0) coherent buffer B { uint x; };\n\
         void main() { atomicAdd(x, 1u, gl_ScopeWorkgroup, 0, 0); }\n",
        1,
        [2, 1, 1],
        &[vec![0]],
    );
    assert!(narrow.ordered);
}

// Vulkan, Appendix B "Memory Model", Data Race: two accesses to one location from different
// workgroups, one of them a write, with no synchronization between them, race; the value a racing
// read returns is then not one the device must reproduce. Here workgroup 0 reads `b[0]` and
// workgroup 1 writes it; the model runs workgroup 0 first, so the read has already returned the
// old value (3) when the write is seen — the value copied from it into `b[1]` must still be racy,
// not an exact 3 (a device may run workgroup 1 first and copy 7).
#[test]
fn a_read_that_ran_before_an_unordered_write_of_its_location_is_racy() {
    let r = run(
        "layout(local_size_x = 1) in;\n\
         layout(binding = 0) coherent buffer B { uint b[]; };\n\
         void main() {\n\
           if (gl_WorkGroupID.x == 0u) { b[1] = b[0]; b[3] = b[2]; } else { b[0] = 7u; b[2] = 9u; }\n\
         }\n",
        4,
        [2, 1, 1],
        &[vec![3, 0, 5, 0]],
    );
    assert!(!races(&r).is_empty(), "{:?}", texts(&r));
    let b = &r.buffers[0];
    // The same at a location past the first (byte 8: the late read is marked by its unit).
    for w in [1, 3] {
        match r.status(b.word_taint(w)) {
            WordStatus::Racy(chain) => assert!(
                chain.contains("OpLoad k.comp:8: unordered accesses (a data race)"),
                "{chain}"
            ),
            other => panic!("b[{w}] copies a racing read: {other:?}"),
        }
    }
    // Only a location past the first races, read lane by lane (each lane its own address): the
    // late read is marked at its own unit, not at unit 0 (which nobody writes here).
    let r = run(
        "layout(local_size_x = 2) in;\n\
         layout(binding = 0) coherent buffer B { uint b[]; };\n\
         void main() {\n\
           uint l = gl_LocalInvocationID.x;\n\
           if (gl_WorkGroupID.x == 0u) { b[4u + l] = b[2u + l]; } else if (l == 0u) { b[2] = 9u; }\n\
         }\n",
        4,
        [2, 1, 1],
        &[vec![3, 0, 5, 6, 0, 0]],
    );
    let b = &r.buffers[0];
    assert!(
        matches!(r.status(b.word_taint(4)), WordStatus::Racy(_)),
        "b[4] copies a racing read: {:?}",
        r.status(b.word_taint(4))
    );
    assert_eq!(
        r.status(b.word_taint(5)),
        WordStatus::Exact,
        "b[5] copies b[3], which nobody writes"
    );
    assert_eq!(u32s(&b.bytes)[5], 6);
}

// GL_EXT_null_initializer with VK_KHR_zero_initialize_workgroup_memory (core in Vulkan 1.3): a
// Workgroup variable may be initialized with OpConstantNull — every component zero, defined, in
// every workgroup — an array's elements and a vector's components alike.
#[test]
fn a_workgroup_variable_with_a_null_initializer_is_zero_in_every_component() {
    let r = run(
        "#extension GL_EXT_null_initializer : require\n\
         layout(local_size_x = 4) in;\n\
         layout(binding = 0) buffer B { uint b[]; };\n\
         shared uint s[4] = {};\n\
         shared uvec4 t = {};\n\
         void main() {\n\
           uint i = gl_LocalInvocationID.x;\n\
           uint o = 8u * gl_WorkGroupID.x;\n\
           b[o + i] = s[i] + 10u;\n\
           b[o + 4u + i] = t[i] + 20u;\n\
         }\n",
        4,
        [2, 1, 1],
        &[vec![7; 16]],
    );
    assert!(r.findings.is_empty(), "{:?}", texts(&r));
    let half = [10, 10, 10, 10, 20, 20, 20, 20];
    assert_eq!(u32s(&r.buffers[0].bytes), [half, half].concat());
    for w in 0..16 {
        assert_eq!(status_of(&r, w), WordStatus::Exact, "b[{w}]");
    }
}

fn status_of(r: &ModelRun, w: usize) -> WordStatus {
    r.status(r.buffers[0].word_taint(w))
}

fn racy_words(r: &ModelRun, words: std::ops::Range<usize>) -> Vec<usize> {
    words
        .filter(|&w| matches!(status_of(r, w), WordStatus::Racy(_)))
        .collect()
}

// Appendix B, Data Race: *every* read that is not location-ordered with a later write of another
// invocation races with it — not one or two of them. Invocations 0–6 read `x`, invocation 7
// writes it, nothing orders them: the seven values read are all racy (the model keeps them in
// order 0, 1, …, 7, so each read has returned before the write is seen), and invocation 7's own
// read, before its write in program order, is exact. With a barrier for buffer memory between the
// reads and the write nothing races.
#[test]
fn every_read_a_later_unordered_write_races_with_is_racy_however_many_invocations_read() {
    let body = |sync: &str| {
        format!(
            "layout(local_size_x = 8) in;\n\
             layout(binding = 0) coherent buffer B {{ uint b[8]; uint x; }};\n\
             void main() {{\n\
               uint i = gl_LocalInvocationID.x;\n\
               uint v = x;\n\
               {sync}\n\
               if (i == 7u) {{ x = 9u; }}\n\
               b[i] = v;\n\
             }}\n"
        )
    };
    let init = vec![0, 0, 0, 0, 0, 0, 0, 0, 5];
    for size in [4, 8] {
        let r = run(&body(""), size, [1, 1, 1], std::slice::from_ref(&init));
        assert_eq!(
            racy_words(&r, 0..8),
            (0..7).collect::<Vec<_>>(),
            "subgroup size {size}: {:?}",
            texts(&r)
        );
        assert_eq!(status_of(&r, 7), WordStatus::Exact);
        assert_eq!(u32s(&r.buffers[0].bytes)[7], 5);
        // One race per reader, each reported once: seven pairs of one pair of lines.
        let groups = race_groups(&r);
        assert_eq!(groups.len(), 1, "{groups:?}");
        assert_eq!(groups[0].1, 7, "{groups:?}");
        let sync = "memoryBarrierBuffer(); barrier();";
        let r = run(&body(sync), size, [1, 1, 1], std::slice::from_ref(&init));
        assert!(races(&r).is_empty(), "{:?}", texts(&r));
        assert!(racy_words(&r, 0..9).is_empty());
    }
}

// Appendix B, Data Race: a read and a write race whatever else happened in between. Workgroup 0
// stores `x` and then reads it back, workgroup 1 stores `x`, unordered with both: the read may
// see either store (a device may run workgroup 1's between workgroup 0's two accesses), so what
// it read is racy though its own invocation's store came just before it. The lost update
// `old = x; x = old + 1` by two workgroups: both `old`s are racy — the first one read too, before
// the other workgroup's store.
#[test]
fn a_read_next_to_its_own_invocations_store_is_racy_when_another_invocation_stores_unordered() {
    let r = run(
        "layout(local_size_x = 1) in;\n\
         layout(binding = 0) coherent buffer B { uint r; uint q; uint x; };\n\
         void main() {\n\
           if (gl_WorkGroupID.x == 0u) { x = 1u; r = x; } else { x = 2u; }\n\
         }\n",
        4,
        [2, 1, 1],
        &[vec![0, 0, 0]],
    );
    assert_eq!(racy_words(&r, 0..3), vec![0, 2], "{:?}", texts(&r));
    let r = run(
        "layout(local_size_x = 1) in;\n\
         layout(binding = 0) coherent buffer B { uint old[2]; uint x; };\n\
         void main() {\n\
           uint w = gl_WorkGroupID.x;\n\
           uint o = x;\n\
           x = o + 1u;\n\
           old[w] = o;\n\
         }\n",
        4,
        [2, 1, 1],
        &[vec![0, 0, 0]],
    );
    assert_eq!(racy_words(&r, 0..3), vec![0, 1, 2], "{:?}", texts(&r));
}

// Appendix B, Data Race: an atomic read-modify-write reads; a plain store of another invocation,
// or an atomic whose scope leaves it out (here Subgroup scope, with the other invocation in
// another subgroup), races with that read as with a plain load's — what the atomic returned is
// racy even when it ran first. Two atomics in each other's scope do not race: what they return
// depends on their order (order-dependent), and nothing is racy.
#[test]
fn what_a_read_modify_write_returned_is_racy_when_a_later_write_races_with_it() {
    let r = run(
        "layout(local_size_x = 1) in;\n\
         layout(binding = 0) coherent buffer B { uint r; uint q; uint x; };\n\
         void main() {\n\
           if (gl_WorkGroupID.x == 0u) { r = atomicAdd(x, 1u); } else { x = 5u; }\n\
         }\n",
        4,
        [2, 1, 1],
        &[vec![0, 0, 0]],
    );
    assert_eq!(racy_words(&r, 0..3), vec![0, 2], "{:?}", texts(&r));
    let body = |first: &str| {
        format!(
            "layout(local_size_x = 8) in;\n\
             layout(binding = 0) coherent buffer B {{ uint r; uint q; uint x; }};\n\
             void main() {{\n\
               uint i = gl_LocalInvocationID.x;\n\
               if (i == 0u) {{ r = atomicAdd(x, 1u, {first}, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed); }}\n\
               if (i == 5u) {{ q = atomicAdd(x, 1u, gl_ScopeWorkgroup, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed); }}\n\
             }}\n"
        )
    };
    let r = run(&body("gl_ScopeSubgroup"), 4, [1, 1, 1], &[vec![0, 0, 0]]);
    assert_eq!(racy_words(&r, 0..3), vec![0, 1, 2], "{:?}", texts(&r));
    let r = run(&body("gl_ScopeWorkgroup"), 4, [1, 1, 1], &[vec![0, 0, 0]]);
    assert!(races(&r).is_empty(), "{:?}", texts(&r));
    for w in [0, 1] {
        assert!(
            matches!(status_of(&r, w), WordStatus::OrderDependent(_)),
            "word {w}: {:?}",
            status_of(&r, w)
        );
    }
    assert_eq!(status_of(&r, 2), WordStatus::Exact);
    assert_eq!(u32s(&r.buffers[0].bytes)[2], 2);
}

// Appendix B, Data Race, with the same-value rule of this tool (docs/interpreter.md): a racing
// store of the bits a read saw cannot change what it read — the reads stay exact and the race is
// a same-value one. And reads a barrier (for buffer memory) orders before two racing stores are
// ordered before both:
// they stay exact though the stores race with each other.
#[test]
fn reads_a_racing_store_cannot_have_changed_stay_exact() {
    let r = run(
        "layout(local_size_x = 8) in;\n\
         layout(binding = 0) coherent buffer B { uint b[8]; uint x; };\n\
         void main() {\n\
           uint i = gl_LocalInvocationID.x;\n\
           uint v = x;\n\
           if (i == 7u) { x = 5u; }\n\
           b[i] = v;\n\
         }\n",
        4,
        [1, 1, 1],
        &[vec![0, 0, 0, 0, 0, 0, 0, 0, 5]],
    );
    let found = races(&r);
    assert!(!found.is_empty(), "{:?}", texts(&r));
    assert!(
        found.iter().all(|(c, _)| *c == RaceClass::SameValue),
        "{found:?}"
    );
    assert!(racy_words(&r, 0..9).is_empty(), "{:?}", texts(&r));
    let r = run(
        "layout(local_size_x = 8) in;\n\
         layout(binding = 0) coherent buffer B { uint b[8]; uint x; };\n\
         void main() {\n\
           uint i = gl_LocalInvocationID.x;\n\
           uint v = x;\n\
           memoryBarrierBuffer(); barrier();\n\
           if (i == 1u) { x = 6u; }\n\
           if (i == 2u) { x = 7u; }\n\
           b[i] = v;\n\
         }\n",
        4,
        [1, 1, 1],
        &[vec![0, 0, 0, 0, 0, 0, 0, 0, 5]],
    );
    assert!(!races(&r).is_empty(), "{:?}", texts(&r));
    assert_eq!(racy_words(&r, 0..9), vec![8], "{:?}", texts(&r));
    assert_eq!(&u32s(&r.buffers[0].bytes)[..8], &[5; 8]);
}

// Vulkan, "Compute Shaders" and Appendix B: the workgroups of a dispatch run in no order the API
// gives, so a store made only on the path an atomic's ticket picks is made in some orders and not
// in others. Here the dispatch's own order makes no store at all (workgroup 0 takes ticket 0,
// workgroup 1 ticket 1); in the other order workgroup 1 takes ticket 0 and stores 9 to byte 1 of
// a buffer of bytes. `--schedules` (docs/interpreter.md, "Other schedules") runs the other orders:
// the byte another order changed is order-dependent — that byte, not its word's first byte, and
// not its neighbours — and the value reported is the first order's.
#[test]
fn a_byte_another_order_of_the_workgroups_changes_is_order_dependent_and_its_neighbours_are_not() {
    let src = "#version 450\n#extension GL_EXT_shader_explicit_arithmetic_types : enable\nlayout(local_size_x = 1) in;\nlayout(binding = 0) coherent buffer C { uint count; };\nlayout(binding = 1) coherent buffer O { uint8_t o[4]; };\nlayout(binding = 2) coherent buffer H { uint16_t h[4]; };\nvoid main() {\n  uint wg = gl_WorkGroupID.x;\n  if (atomicAdd(count, 1u) == 1u - wg && wg == 1u) { o[1] = uint8_t(9); h[1] = uint16_t(9); }\n}\n";
    let k = decode(&glsl(src, "k.comp"), &DecodeOptions::default()).unwrap();
    let bufs = bindings([bytes_u32(&[0]), bytes_u32(&[0]), bytes_u32(&[0, 0])]);
    let one = run_model(&k, cfg_schedules(1, [2, 1, 1], 1), &bufs, None).unwrap();
    let o = one.buffers.iter().find(|b| b.binding == 1).unwrap();
    assert_eq!(o.bytes, [0; 4]);
    assert!(o.taint.iter().all(|t| one.status(*t) == WordStatus::Exact));
    let four = run_model(&k, cfg_schedules(1, [2, 1, 1], 4), &bufs, None).unwrap();
    let o = four.buffers.iter().find(|b| b.binding == 1).unwrap();
    assert_eq!(o.bytes, [0; 4], "the first order's values");
    for (i, t) in o.taint.iter().enumerate() {
        match (i, four.status(*t)) {
            (1, WordStatus::OrderDependent(chain)) => assert!(
                chain.contains("another order of the workgroups"),
                "o[1]: {chain}"
            ),
            (1, other) => panic!("o[1]: {other:?}"),
            (_, WordStatus::Exact) => {}
            (_, other) => panic!("o[{i}]: {other:?}"),
        }
    }
    // The same for 16-bit elements: h[1], its own half of the word.
    let h = four.buffers.iter().find(|b| b.binding == 2).unwrap();
    assert_eq!(h.bytes, [0; 8], "the first order's values");
    let per_element: Vec<bool> = (0..4)
        .map(|e| {
            let units = h.taint.len() / 4;
            (e * units..(e + 1) * units)
                .any(|u| matches!(four.status(h.taint[u]), WordStatus::OrderDependent(_)))
        })
        .collect();
    assert_eq!(per_element, [false, true, false, false]);
}

// What another order of the workgroups finds is that order's: the CTS's message-passing test
// (`memory_model/message_passing/permuted_index/release_acquire_atomic_payload.amber`), cut to two
// workgroups of one invocation. Each writes its own `data`, releases its own `flag`, then reads the
// other's flag with acquire and the other's data, and counts a failure where `flag > data`. In
// the dispatch's own order workgroup 0 reads flag 0 — its data read races with workgroup 1's
// store, but `0 > d` is false for every `d` — and workgroup 1 reads flag 1, synchronized with
// workgroup 0's release (Appendix B, Synchronizes-With), so data 1: no failure in any order. In
// the other order the first order's racy read is taken as racy again, where it is synchronized,
// and that order's branch on it was lost; the objects its paths not taken store to, and who
// wrote each unit, leaked into the first order's report: `failures` came back undefined ("another
// allowed execution may write here"). It is exact 0, with four orders as with one.
#[test]
fn what_another_order_of_the_workgroups_finds_on_its_own_paths_stays_out_of_the_first_orders_report(
) {
    let src = "#version 450
#extension GL_KHR_memory_scope_semantics : require
         layout(local_size_x = 1) in;
         struct S { uint data; uint flag; };
         layout(binding = 0) buffer B0 { coherent S arr[]; };
         layout(binding = 1) buffer B1 { uint failures; };
         void main() {
           uint i = gl_WorkGroupID.x, j = 1u - i;
           arr[i].data = 1u;
           atomicStore(arr[i].flag, 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelease);
           uint flag = atomicLoad(arr[j].flag, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsAcquire);
           uint data = arr[j].data;
           if (flag > data) { atomicAdd(failures, 1u); }
         }
";
    let k = decode(&glsl(src, "k.comp"), &DecodeOptions::default()).unwrap();
    let bufs = bindings([bytes_u32(&[0; 4]), bytes_u32(&[0])]);
    for n in [1, 4] {
        let r = run_model(&k, cfg_schedules(1, [2, 1, 1], n), &bufs, None).unwrap();
        let f = r.buffers.iter().find(|b| b.binding == 1).unwrap();
        assert_eq!(u32s(&f.bytes), [0], "{n} orders");
        assert_eq!(r.status(f.taint[0]), WordStatus::Exact, "{n} orders");
    }
}

// Vulkan, "Compute Shaders": the workgroups of a dispatch run in no order the API gives, so which
// workgroup takes a lock first is the device's choice. Four workgroups take a spin lock (acquire
// compare-and-swap, release store), and each records the running total it found under it: the
// total is the same in every order (1 + 2 + 3 + 4), what each workgroup found is not. With one
// order the model called every recorded value exact — a device that ran workgroup 1 first would
// have "differed" from the model. `lockstep run` and `lockstep amber` run four orders by default
// where workgroups interact (`DEFAULT_SCHEDULES`): the recorded values are order-dependent, the
// total exact.
#[test]
fn what_a_lock_protects_is_order_dependent_where_the_order_workgroups_take_it_in_decides() {
    const { assert!(DEFAULT_SCHEDULES > 1) };
    let src = "#version 450
#extension GL_KHR_memory_scope_semantics : require
         layout(local_size_x = 1) in;
         layout(binding = 0) coherent buffer L { uint lock; uint total; uint found[]; };
         void main() {
           uint w = gl_WorkGroupID.x;
           while (atomicCompSwap(lock, 0u, 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsAcquire, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed) != 0u) {}
           uint t = total;
           total = t + w + 1u;
           found[w] = t;
           atomicStore(lock, 0u, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelease);
         }
";
    let k = decode(&glsl(src, "k.comp"), &DecodeOptions::default()).unwrap();
    let bufs = bindings([bytes_u32(&[0; 6])]);
    let mut c = RunConfig::new(SubgroupSize::new(1).unwrap(), [4, 1, 1]);
    assert_eq!(c.schedules, DEFAULT_SCHEDULES);
    let r = run_model(&k, c.clone(), &bufs, None).unwrap();
    let b = &r.buffers[0];
    assert_eq!(
        u32s(&b.bytes),
        [0, 10, 0, 1, 3, 6],
        "the dispatch's own order's values"
    );
    assert_eq!(r.status(b.taint[1]), WordStatus::Exact, "the total");
    for w in 2..6 {
        match r.status(b.taint[w]) {
            WordStatus::OrderDependent(chain) => {
                assert!(chain.contains("another order of the workgroups"), "{chain}")
            }
            other => panic!("found[{}]: {other:?}", w - 2),
        }
    }
    // One order alone cannot tell.
    c.schedules = 1;
    let r = run_model(&k, c, &bufs, None).unwrap();
    assert!((2..6).all(|w| r.status(r.buffers[0].taint[w]) == WordStatus::Exact));
}

// Appendix B, Data Race: two potentially-concurrent accesses to one location, at least one a
// write, race unless *both* are atomic (with each other's scope). Invocation 0 writes `x` with a
// plain store; invocation 1 then adds to it atomically, with nothing ordering the two: a data
// race — the atomic does not make the plain write atomic. (Two atomics in the same place do not
// race: the second half.)
#[test]
fn an_atomic_after_an_unordered_plain_write_of_its_location_races() {
    let body = |first: &str| {
        format!(
            "layout(local_size_x = 2) in;\nlayout(binding = 0) coherent buffer B {{ uint x; }};\n\
             void main() {{\n  uint i = gl_LocalInvocationID.x;\n  if (i == 0u) {{ {first} }}\n\
             \x20 if (i == 1u) {{ atomicAdd(x, 1u); }}\n}}\n"
        )
    };
    let r = run(&body("x = 5u;"), 2, [1, 1, 1], &[vec![0]]);
    let found = races(&r);
    assert!(
        found.iter().any(|(c, _)| *c == RaceClass::Value),
        "{:?}",
        texts(&r)
    );
    assert!(
        matches!(r.status(r.buffers[0].word_taint(0)), WordStatus::Racy(_)),
        "{:?} {:?}",
        r.status(r.buffers[0].word_taint(0)),
        texts(&r)
    );
    let r = run(&body("atomicExchange(x, 5u);"), 2, [1, 1, 1], &[vec![0]]);
    assert!(races(&r).is_empty(), "{:?}", texts(&r));
}

// Vulkan spec, Appendix B "Memory Model", Data Race: two potentially-concurrent accesses to one
// location of which one writes form a data race unless both are atomic with mutually-inclusive
// scopes. Invocation 1's plain read of `c` and invocation 6's later `atomicAdd` of it are ordered
// by nothing (no barrier between them): a data race, whichever ran first — so the value the read
// returned is racy, though in the model's order it ran before the add and saw 5, and so is the
// add's result; the race is named with both sides. (The read is found only when the add runs, so
// the run is repeated with it marked: a read side of a race with a later atomic write.)
#[test]
fn a_plain_read_racing_with_a_later_atomic_write_is_racy() {
    let r = run(
        "layout(local_size_x = 8) in;\n\
         layout(binding = 0) buffer O { uint o[]; };\n\
         shared uint c;\n\
         void main() {\n\
           uint i = gl_LocalInvocationIndex;\n\
           if (i == 0u) c = 5u;\n\
           barrier();\n\
           if (i == 1u) o[0] = c;\n\
           if (i == 6u) o[1] = atomicAdd(c, 1u);\n\
         }\n",
        4,
        [1, 1, 1],
        &[vec![0; 2]],
    );
    let o = &r.buffers[0];
    for w in 0..2 {
        assert!(
            matches!(r.status(o.word_taint(w)), WordStatus::Racy(_)),
            "o[{w}]: {:?}",
            r.status(o.word_taint(w))
        );
    }
    let races = races(&r);
    assert_eq!(races.len(), 1, "{races:?}");
    assert!(
        races[0]
            .1
            .contains("invocation 1 (subgroup 0 lane 1) read at k.comp:12")
            && races[0]
                .1
                .contains("invocation 6 (subgroup 1 lane 2) wrote at k.comp:13"),
        "{races:?}"
    );
}

// Appendix B, Data Race: two accesses race when they are not location-ordered — a property of
// the two *dynamic* accesses, not of the instruction. One load in a loop runs once per step; in
// the first step invocation 1's read and invocation 0's store are unordered (a race, the value
// read racy), in the second a control barrier with workgroup memory semantics (Appendix B,
// Scoped Modification Order … and the barrier's synchronizes-with) orders the same load after
// that store: its value is the store's, exact. A race found on one step leaves the others alone
// (before, every dynamic instance of the raced load by that invocation came out racy, and a
// bitonic sort's partner reads made the whole sort racy).
#[test]
fn a_race_on_one_step_of_a_loop_leaves_the_same_load_after_a_barrier_exact() {
    let r = run(
        "layout(local_size_x = 2) in;\n\
         layout(binding = 0) buffer B { uint o[4]; };\n\
         shared uint s;\n\
         void main() {\n\
           uint i = gl_LocalInvocationID.x;\n\
           if (i == 0u) { s = 1u; }\n\
           barrier();\n\
           for (uint k = 0u; k < 2u; k++) {\n\
             uint v = s;\n\
             if (k == 0u && i == 0u) { s = 2u; }\n\
             barrier();\n\
             o[2u * i + k] = v;\n\
           }\n\
         }\n",
        4,
        [1, 1, 1],
        &[vec![0; 4]],
    );
    assert_eq!(races(&r).len(), 1, "{:?}", texts(&r));
    assert_eq!(racy_words(&r, 0..4), vec![2], "{:?}", texts(&r));
    for (w, want) in [(0, 1), (1, 2), (3, 2)] {
        assert_eq!(status_of(&r, w), WordStatus::Exact, "word {w}");
        assert_eq!(u32s(&r.buffers[0].bytes)[w], want, "word {w}");
    }
}

// Appendix B, Data Race, the other way round: a write that no barrier orders with *any* step of
// another workgroup's loop races with the load of every step. Workgroup 0 reads `x` twice, a
// barrier between; workgroup 1 stores it, unordered with both reads (a barrier orders only its
// own workgroup): both values are racy, not only the last step's; `x` holds the one store, 5.
#[test]
fn a_write_unordered_with_every_step_of_a_loop_makes_each_steps_load_racy() {
    let r = run(
        "layout(local_size_x = 1) in;\n\
         layout(binding = 0) coherent buffer B { uint o[2]; uint x; };\n\
         void main() {\n\
           if (gl_WorkGroupID.x == 0u) {\n\
             for (uint k = 0u; k < 2u; k++) { o[k] = x; barrier(); }\n\
           } else {\n\
             x = 5u;\n\
           }\n\
         }\n",
        4,
        [2, 1, 1],
        &[vec![0; 3]],
    );
    assert_eq!(racy_words(&r, 0..3), vec![0, 1], "{:?}", texts(&r));
    assert_eq!(u32s(&r.buffers[0].bytes)[2], 5);
}
