//! Buffer references (GL_EXT_buffer_reference, SPIR-V's `PhysicalStorageBuffer` storage class
//! under the `PhysicalStorageBuffer64` addressing model; issue 20): minimal kernels written here,
//! run through `lockstep run`'s job with buffers given by descriptor or only by address and
//! addresses written by the host (`@NAME`). Expected values come from the rules cited at each test.
#![cfg(feature = "vulkan")]
use crate::support;
use lockstep::kernel::run::{JobBuffer, KernelJob, Place, Report, Tolerance};
use lockstep::kernel::{compile, BufferSpec, HostBuffer, SourceLang, SourceOptions};
use lockstep::model::SubgroupSize;

const HEAD: &str = "#version 450\n#extension GL_EXT_buffer_reference : require\n\
    #extension GL_EXT_shader_explicit_arithmetic_types_int64 : require\n";

fn spec(s: &str) -> (HostBuffer, BufferSpec) {
    let spec: BufferSpec = s.parse().unwrap();
    (spec.build().unwrap(), spec)
}

/// A job: `bound` by binding (set 0), `unbound` by name, `push` a buffer spec; addresses resolved
/// as `lockstep run` does.
fn job(src: &str, bound: &[&str], unbound: &[(&str, &str)], push: Option<&str>) -> KernelJob {
    let module = compile(
        &format!("{HEAD}{src}"),
        SourceLang::Glsl,
        &SourceOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let mut job = KernelJob::new(module);
    let mut refs = Vec::new();
    for (i, b) in bound.iter().enumerate() {
        let (h, s) = spec(b);
        refs.push((Place::Bound(i), h.dtype, s.address_refs().to_vec()));
        job.buffers.push(JobBuffer::new(0, i as u32, h));
    }
    for (i, (name, b)) in unbound.iter().enumerate() {
        let (h, s) = spec(b);
        refs.push((Place::Unbound(i), h.dtype, s.address_refs().to_vec()));
        job.unbound.push((name.to_string(), h));
    }
    if let Some(p) = push {
        let (h, s) = spec(p);
        refs.push((Place::Push, h.dtype, s.address_refs().to_vec()));
        job.push = Some(h);
    }
    for (into, dtype, r) in refs {
        job.add_address_refs(into, dtype, &r).unwrap();
    }
    job
}

struct Out {
    /// bound buffers, then unbound ones
    bytes: Vec<Vec<u8>>,
    report: Report,
}

fn run(job: &KernelJob, workgroups: u32) -> Out {
    let mut job = job.clone();
    job.workgroups = [workgroups, 1, 1];
    let model = job.run_model(SubgroupSize::new(8).unwrap(), None).unwrap();
    let report = job.compare(&model, None, Tolerance::default());
    let mut outs: Vec<_> = model.run.buffers.iter().collect();
    outs.sort_by_key(|b| (b.set, b.binding));
    Out {
        bytes: outs.iter().map(|b| b.bytes.clone()).collect(),
        report,
    }
}

fn f32s(b: &[u8]) -> Vec<f32> {
    b.chunks(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn findings(r: &Report) -> String {
    r.findings
        .iter()
        .map(|f| format!("[{}] {} ← {}", f.kind.name(), f.items.join(", "), f.why))
        .collect::<Vec<_>>()
        .join("\n")
}

const COPY: &str = "layout(local_size_x = 8) in;\n\
    layout(buffer_reference, std430, buffer_reference_align = 4) buffer Floats { float v[]; };\n\
    layout(buffer_reference, std430, buffer_reference_align = 4) buffer One { float x; };\n\
    layout(push_constant) uniform P { Floats src; uint64_t dst; } p;\n\
    void main() { uint i = gl_GlobalInvocationID.x;\n\
      One o = One(p.dst + 4ul * i); o.x = p.src.v[i] * 2.0; }\n";

// SPIR-V 2.18.2 / 3.7 (PhysicalStorageBuffer: "storage buffers ... accessed through physical
// addresses") and GL_EXT_buffer_reference: a reference is the address of the buffer's memory; a
// reference made from an integer (OpConvertUToPtr) and indexed through (OpAccessChain) reaches the
// bytes at that address plus the offsets — here 4·i past `dst`, element i.
#[test]
fn a_buffer_reference_reaches_the_bytes_at_its_address_plus_the_chain_offsets() {
    let j = job(
        COPY,
        &[],
        &[("src", "series:f32:8"), ("dst", "zeros:f32:8")],
        Some("values:u64:@src,@dst"),
    );
    let out = run(&j, 1);
    assert_eq!(
        f32s(&out.bytes[1]),
        [0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0]
    );
    assert!(out.report.ok(), "{}", findings(&out.report));
    assert_eq!(out.report.buffers[1].name, "buffer dst (no descriptor)");
    assert_eq!(out.report.buffers[1].exact, 8);
}

// GL_EXT_buffer_reference: "If any access through a buffer reference value uses an address that
// is not within the bounds of a buffer, it produces undefined behavior" (and Vulkan's "Robust
// Buffer Access" covers only descriptor-bound buffers). An address in no buffer (the null reference, 0) is an out-of-bounds access: the value read is
// undefined, and after such a write nothing the dispatch wrote is pinned down.
#[test]
fn an_access_through_an_address_in_no_buffer_is_out_of_bounds_and_undefined() {
    let read = "layout(local_size_x = 4) in;\n\
        layout(buffer_reference, std430) buffer Floats { float v[]; };\n\
        layout(push_constant) uniform P { Floats src; } p;\n\
        layout(binding = 0) buffer O { float o[]; };\n\
        void main() { uint i = gl_GlobalInvocationID.x; o[i] = p.src.v[i]; }\n";
    let out = run(&job(read, &["zeros:f32:4"], &[], Some("values:u64:0")), 1);
    let r = &out.report;
    assert_eq!(r.buffers[0].undefined, 4, "{}", findings(r));
    let text = findings(r);
    assert!(
        text.contains("[out_of_bounds] address 0x0 by")
            && text.contains("read through a device address that lies in no buffer")
            && text.contains("device address 0x4 (4 bytes) lies in no buffer of the dispatch"),
        "{text}"
    );
    // Invocation i reads element i: address 4·i is invocation i's access.
    assert!(
        text.contains("address 0x4 by workgroup (0,0,0) invocation 1 (subgroup 0 lane 1)")
            && text.contains("address 0xc by workgroup (0,0,0) invocation 3 (subgroup 0 lane 3)"),
        "{text}"
    );
    // A write through the null reference: every buffer the dispatch writes is undefined.
    let write = "layout(local_size_x = 4) in;\n\
        layout(buffer_reference, std430) buffer Floats { float v[]; };\n\
        layout(push_constant) uniform P { Floats dst; } p;\n\
        layout(binding = 0) buffer O { float o[]; };\n\
        void main() { uint i = gl_GlobalInvocationID.x; o[i] = 1.0; if (i == 3u) p.dst.v[0] = 2.0; }\n";
    let out = run(&job(write, &["zeros:f32:4"], &[], Some("values:u64:0")), 1);
    assert_eq!(
        out.report.buffers[0].undefined,
        4,
        "{}",
        findings(&out.report)
    );
    assert!(findings(&out.report).contains("write through a device address that lies in no buffer"));
    // An atomic add through it reads and writes: a write out of bounds, as the store was.
    // An atomic load only reads, its 8 bytes (a 64-bit load): the value is undefined, named by the
    // address and width of the access.
    for (access, write) in [
        ("atomicAdd(p.dst.c[0], 1ul)", true),
        ("atomicLoad(p.dst.c[0], gl_ScopeDevice, 0, 0)", false),
    ] {
        let atomic = format!("#extension GL_EXT_shader_atomic_int64 : require\n\
            #extension GL_KHR_memory_scope_semantics : require\n\
            layout(local_size_x = 4) in;\n\
            layout(buffer_reference, std430) buffer Counts {{ uint64_t c[]; }};\n\
            layout(push_constant) uniform P {{ Counts dst; }} p;\n\
            layout(binding = 0) buffer O {{ float o[]; }};\n\
            void main() {{ uint i = gl_GlobalInvocationID.x; o[i] = 1.0; if (i == 3u) o[i] = float({access}); }}\n");
        let out = run(
            &job(&atomic, &["zeros:f32:4"], &[], Some("values:u64:0")),
            1,
        );
        let text = findings(&out.report);
        if write {
            assert_eq!(out.report.buffers[0].undefined, 4, "{text}");
            assert!(
                text.contains("write through a device address that lies in no buffer"),
                "{text}"
            );
        } else {
            assert_eq!(out.report.buffers[0].undefined, 1, "{text}");
            assert!(
                text.contains("read through a device address that lies in no buffer")
                    && text
                        .contains("device address 0x0 (8 bytes) lies in no buffer of the dispatch"),
                "{text}"
            );
        }
    }
}

// SPIR-V 2.2.2 / OpUndef: "each consumption of Result <id> yields an arbitrary, possibly different
// bit pattern" — a reference variable never written, or an index never written, is such a value,
// and an access chain on it (OpAccessChain on a `PhysicalStorageBuffer` pointer: the address plus
// the steps' bytes) is an arbitrary address: GL_EXT_buffer_reference makes an access through an
// address outside every buffer undefined behaviour, so what it reads is undefined whichever it
// is — and lockstep cannot say which buffer, if any, it lies in, so it names the undefined value,
// not an address in no buffer.
#[test]
fn an_access_chain_on_an_undefined_address_or_with_an_undefined_index_reads_an_undefined_value() {
    let base = "layout(local_size_x = 4) in;\n\
        layout(buffer_reference, std430) buffer Floats { float v[]; };\n\
        layout(binding = 0) buffer O { float o[]; };\n\
        void main() { uint i = gl_GlobalInvocationID.x; Floats r; o[i] = r.v[i]; }\n";
    let index = "layout(local_size_x = 4) in;\n\
        layout(buffer_reference, std430) buffer Floats { float v[]; };\n\
        layout(push_constant) uniform P { Floats src; } p;\n\
        layout(binding = 0) buffer O { float o[]; };\n\
        void main() { uint i = gl_GlobalInvocationID.x; uint u; o[i] = p.src.v[u]; }\n";
    for (what, src, var) in [("base", base, "r"), ("index", index, "u")] {
        let out = run(
            &job(
                src,
                &["zeros:f32:4"],
                &[("src", "series:f32:8")],
                Some("values:u64:@src"),
            ),
            1,
        );
        let r = &out.report;
        let text = findings(r);
        assert_eq!(r.buffers[0].undefined, 4, "{what}: {text}");
        let never = format!("read of Function variable {var} (in main), never written");
        assert!(
            text.contains(&never) && !text.contains("lies in no buffer"),
            "{what}: {text}"
        );
    }
}

// The same rule at a buffer's end: reading on past the last element reaches addresses in no
// buffer (undefined; the elements inside are exact), and one access that starts inside the buffer
// and runs past its end (a two-float struct at its last float) is out of bounds of that buffer,
// named.
#[test]
fn an_access_running_past_a_buffers_end_is_out_of_bounds_of_that_buffer() {
    let src = "layout(local_size_x = 8) in;\n\
        layout(buffer_reference, std430) buffer Floats { float v[]; };\n\
        struct Two { float a; float b; };\n\
        layout(buffer_reference, std430, buffer_reference_align = 4) buffer Pair { Two t; };\n\
        layout(push_constant) uniform P { Floats src; Pair last; } p;\n\
        layout(binding = 0) buffer O { float o[8]; float a; float b; };\n\
        void main() { uint i = gl_GlobalInvocationID.x; o[i] = p.src.v[i + 4u];\n\
          if (i == 0u) { Two t = p.last.t; a = t.a; b = t.b; } }\n";
    let out = run(
        &job(
            src,
            &["zeros:f32:10"],
            &[("src", "series:f32:8")],
            Some("values:u64:@src,@src+28"),
        ),
        1,
    );
    assert_eq!(f32s(&out.bytes[0])[..4], [4.0, 5.0, 6.0, 7.0]);
    let r = &out.report;
    assert_eq!(
        (r.buffers[0].exact, r.buffers[0].undefined),
        (4, 6),
        "{}",
        findings(r)
    );
    let text = findings(r);
    assert!(
        text.contains("read through a device address that lies in no buffer")
            && text.contains("out-of-bounds read of src"),
        "{text}"
    );
    // The address just past the buffer's last byte is in no buffer (a buffer's bytes are
    // [address, address + size)), not at byte `size` of it.
    let end = "layout(local_size_x = 1) in;\n\
        layout(buffer_reference, std430) buffer Floats { float v[]; };\n\
        layout(push_constant) uniform P { Floats src; } p;\n\
        layout(binding = 0) buffer O { float o; };\n\
        void main() { o = p.src.v[8]; }\n";
    let out = run(
        &job(
            end,
            &["zeros:f32:1"],
            &[("src", "series:f32:8")],
            Some("values:u64:@src"),
        ),
        1,
    );
    let text = findings(&out.report);
    assert!(
        text.contains("read through a device address that lies in no buffer")
            && !text.contains("out-of-bounds read of src"),
        "{text}"
    );
}

// Vulkan, VUID-StandaloneSpirv-PhysicalStorageBuffer64-06315: "the pointer value of a memory
// access instruction must be at least as aligned as specified by the Aligned memory access
// operand" — glslang puts a reference type's `buffer_reference_align` (16 here) on every access
// through it, and GL_EXT_buffer_reference: "If the layout qualifier is not specified, it defaults to
// 16 bytes. All buffer reference addresses used for a particular buffer reference type are assumed
// to be aligned to this alignment value." An address that
// is not a multiple of it (8 past a 16-aligned base) makes the access undefined; the aligned one is
// exact.
#[test]
fn an_access_through_a_misaligned_address_is_undefined_by_its_aligned_operand() {
    let src = "layout(local_size_x = 2) in;\n\
        layout(buffer_reference, std430, buffer_reference_align = 16) buffer V { vec4 v; };\n\
        layout(push_constant) uniform P { uint64_t src; } p;\n\
        layout(binding = 0) buffer O { vec4 o[2]; };\n\
        void main() { uint i = gl_GlobalInvocationID.x; o[i] = V(p.src + 8ul * i).v; }\n";
    let out = run(
        &job(
            src,
            &["zeros:f32:8"],
            &[("src", "series:f32:16")],
            Some("values:u64:@src"),
        ),
        1,
    );
    assert_eq!(f32s(&out.bytes[0])[..4], [0.0, 1.0, 2.0, 3.0]);
    let r = &out.report;
    assert_eq!(
        (r.buffers[0].exact, r.buffers[0].undefined),
        (4, 4),
        "{}",
        findings(r)
    );
    assert!(
        findings(r).contains("is not 16-byte aligned, as the access's Aligned operand declares"),
        "{}",
        findings(r)
    );
}

// SPIR-V 3.37.6 OpTypeForwardPointer: a block holding a reference to its own type (a linked list).
// The host writes each node's `next` as an address inside the same buffer (`@nodes+16`); walking
// the list follows them. Node layout (std430): next at 0 (8 bytes), value at 8, 16 bytes a node.
#[test]
fn a_linked_list_of_forward_declared_references_is_walked_through_its_addresses() {
    let src = "layout(local_size_x = 1) in;\n\
        layout(buffer_reference) buffer Node;\n\
        layout(buffer_reference, std430, buffer_reference_align = 8) buffer Node { Node next; float v; };\n\
        layout(push_constant) uniform P { Node head; } p;\n\
        layout(binding = 0) buffer O { float sum; uint count; };\n\
        void main() { Node n = p.head; float s = 0.0; uint c = 0u;\n\
          while (uint64_t(n) != 0ul) { s += n.v; c++; n = n.next; }\n\
          sum = s; count = c; }\n";
    // three nodes: 1.0 → 2.0 → 4.0 → null (f32 bits in the low word of the second u64)
    let nodes = "values:u64:@nodes+16,0x3f800000,@nodes+32,0x40000000,0,0x40800000";
    let out = run(
        &job(
            src,
            &["zeros:u32:2"],
            &[("nodes", nodes)],
            Some("values:u64:@nodes"),
        ),
        1,
    );
    let o = &out.bytes[0];
    assert_eq!(f32::from_le_bytes(o[..4].try_into().unwrap()), 7.0);
    assert_eq!(u32::from_le_bytes(o[4..8].try_into().unwrap()), 3);
    assert!(out.report.ok(), "{}", findings(&out.report));
}

// The same list reversed in place: each node's `next`, a member of the forward-declared pointer
// type, is written with a value of the type the OpTypePointer completes (SPIR-V 3.37.6: "the
// OpTypePointer ... must be the same" type) — then walked again: 4 → 2 → 1.
#[test]
fn a_linked_list_of_forward_declared_references_is_reversed_in_place() {
    let src = "layout(local_size_x = 1) in;\n\
        layout(buffer_reference) buffer Node;\n\
        layout(buffer_reference, std430, buffer_reference_align = 8) buffer Node { Node next; float v; };\n\
        layout(push_constant) uniform P { Node head; } p;\n\
        layout(binding = 0) buffer O { float digits; uint count; };\n\
        void main() { Node n = p.head; Node prev = Node(0ul);\n\
          while (uint64_t(n) != 0ul) { Node nx = n.next; n.next = prev; prev = n; n = nx; }\n\
          float s = 0.0; uint c = 0u;\n\
          while (uint64_t(prev) != 0ul) { s = s * 10.0 + prev.v; c++; prev = prev.next; }\n\
          digits = s; count = c; }\n";
    let nodes = "values:u64:@nodes+16,0x3f800000,@nodes+32,0x40000000,0,0x40800000";
    let out = run(
        &job(
            src,
            &["zeros:u32:2"],
            &[("nodes", nodes)],
            Some("values:u64:@nodes"),
        ),
        1,
    );
    let o = &out.bytes[0];
    assert_eq!(f32::from_le_bytes(o[..4].try_into().unwrap()), 421.0);
    assert_eq!(u32::from_le_bytes(o[4..8].try_into().unwrap()), 3);
    assert!(out.report.ok(), "{}", findings(&out.report));
}

// SPIR-V 3.37.18 (atomics on PhysicalStorageBuffer memory) and the Vulkan memory model: atomic
// read-modify-writes through an address are atomic like any other — 64 increments give 64 —
// while a plain store through one address and a plain load of the same bytes through the
// descriptor, unordered, are a data race (one buffer, two ways to reach it).
#[test]
fn atomics_through_an_address_are_atomic_and_plain_accesses_through_two_names_race() {
    let atomics = "layout(local_size_x = 16) in;\n\
        layout(buffer_reference, std430) buffer Count { uint n; };\n\
        layout(push_constant) uniform P { Count c; } p;\n\
        void main() { atomicAdd(p.c.n, 1u); }\n";
    let out = run(
        &job(
            atomics,
            &[],
            &[("count", "zeros:u32:1")],
            Some("values:u64:@count"),
        ),
        4,
    );
    assert_eq!(out.bytes[0], 64u32.to_le_bytes());
    assert!(out.report.ok(), "{}", findings(&out.report));
    let race = "layout(local_size_x = 2) in;\n\
        layout(buffer_reference, std430) buffer One { uint x; };\n\
        layout(push_constant) uniform P { One alias; } p;\n\
        layout(binding = 0) buffer B { uint x; uint seen; } b;\n\
        void main() { if (gl_LocalInvocationID.x == 0u) p.alias.x = 7u; else b.seen = b.x; }\n";
    let out = run(&job(race, &["zeros:u32:2"], &[], Some("values:u64:@0")), 1);
    let text = findings(&out.report);
    assert!(text.contains("[race]"), "{text}");
    assert_eq!(out.report.buffers[0].racy, 1, "{text}");
}

// GL_EXT_buffer_reference: a reference is the address of a buffer's memory — a buffer bound to a
// descriptor too. The address of the buffer at binding 1 reaches that buffer, not the one at
// binding 0 before it.
#[test]
fn the_address_of_a_bound_buffer_reaches_that_buffer() {
    let src = "layout(local_size_x = 1) in;\n\
        layout(buffer_reference, std430) buffer One { uint x; };\n\
        layout(push_constant) uniform P { One second; } p;\n\
        layout(binding = 0) buffer A { uint a; };\n\
        layout(binding = 1) buffer B { uint b; };\n\
        void main() { p.second.x = a + b + 5u; }\n";
    let out = run(
        &job(
            src,
            &["values:u32:1", "values:u32:2"],
            &[],
            Some("values:u64:@1"),
        ),
        1,
    );
    assert!(out.report.ok(), "{}", findings(&out.report));
    assert_eq!(out.bytes[0], 1u32.to_le_bytes(), "binding 0 untouched");
    assert_eq!(
        out.bytes[1],
        8u32.to_le_bytes(),
        "binding 1 written through its address"
    );
}

// Bad input names the rule: an address of a buffer that is not given, and an address in an
// element too narrow for it.
#[test]
fn an_address_of_a_missing_buffer_or_in_a_narrow_element_is_refused_naming_it() {
    let module = compile(
        &format!("{HEAD}{COPY}"),
        SourceLang::Glsl,
        &SourceOptions::default(),
    )
    .unwrap();
    let mut j = KernelJob::new(module);
    let (h, s) = spec("values:u64:@nosuch");
    let e = j
        .add_address_refs(Place::Push, h.dtype, s.address_refs())
        .unwrap_err()
        .to_string();
    assert!(e.contains("no buffer is named nosuch"), "{e}");
    let e = "values:f32:@src"
        .parse::<BufferSpec>()
        .unwrap_err()
        .to_string();
    assert!(e.contains("64-bit integer element"), "{e}");
    let e = "values:u32:@src"
        .parse::<BufferSpec>()
        .unwrap_err()
        .to_string();
    assert!(e.contains(".lo"), "{e}");
}

// The device (lavapipe here; the H100 through `device`): the driver gives the addresses, the
// model uses the same ones, and every value the model defines agrees — including the undefined
// elements read past the end, reported and not compared.
#[test]
fn buffer_references_on_the_device_agree_with_every_value_the_model_defines() {
    let Some(ctx) = support::device() else {
        return;
    };
    let src = "layout(local_size_x = 8) in;\n\
        #extension GL_EXT_buffer_reference_uvec2 : require\n\
        layout(buffer_reference, std430, buffer_reference_align = 4) buffer Floats { float v[]; };\n\
        layout(push_constant) uniform P { uvec2 src; uint64_t dst; } p;\n\
        layout(binding = 0) buffer O { float o[]; };\n\
        void main() { uint i = gl_GlobalInvocationID.x; Floats s = Floats(p.src);\n\
          o[i] = s.v[i + 4u]; Floats(p.dst).v[i] = s.v[i] + 0.5; }\n";
    let mut j = job(
        src,
        &["zeros:f32:8"],
        &[("src", "series:f32:8"), ("dst", "zeros:f32:8")],
        Some("values:u32:@src.lo,@src.hi,@dst.lo,@dst.hi"),
    );
    let size = ctx.caps.subgroup_size;
    let kernel = j.decode().unwrap();
    let (device, bases) = j.run_device(&ctx, &kernel, size).unwrap();
    assert_eq!(bases.len(), 2, "{bases:?}");
    j.device_bases = Some(bases);
    let model = j
        .run_model(SubgroupSize::new(size as u64).unwrap(), None)
        .unwrap();
    let r = j.compare(&model, Some(&device), Tolerance::default());
    let mismatches: usize = r.buffers.iter().map(|b| b.mismatches).sum();
    assert_eq!(mismatches, 0, "{}", findings(&r));
    let defined: Vec<usize> = r.buffers.iter().map(|b| b.exact).collect();
    assert_eq!(defined, [4, 8, 8], "{}", findings(&r));
    assert_eq!(f32s(&device[2]), [0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5]);
}

// Each buffer's device addresses are its own (Vulkan 1.3 §12.7 "Buffer Device Addresses": an
// address identifies one byte of one buffer): bases a device reported that would make two
// buffers overlap are refused as bad input naming both, and buffers that only touch are fine.
#[test]
fn device_addresses_that_make_two_buffers_overlap_are_refused() {
    let src = "layout(local_size_x = 1) in;\n\
        layout(binding = 0) buffer A { uint a[]; };\n\
        layout(binding = 1) buffer B { uint b[]; };\n\
        void main() { a[0] = 1u; b[0] = 2u; }\n";
    let j = job(src, &["zeros:u32:4", "zeros:u32:4"], &[], None);
    let with = |bases: Vec<(Place, u64)>| {
        let mut j = j.clone();
        j.device_bases = Some(bases);
        j.run_model(SubgroupSize::new(8).unwrap(), None)
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    let e = with(vec![(Place::Bound(0), 0x1000), (Place::Bound(1), 0x1008)]).unwrap_err();
    assert!(
        e.contains("overlap in the address space") && e.contains("0x1000") && e.contains("0x1008"),
        "{e}"
    );
    with(vec![(Place::Bound(0), 0x1000), (Place::Bound(1), 0x1010)]).unwrap();
}

// Vulkan, Appendix B, Private vs. Non-Private, through a buffer reference: the accesses are
// non-private only where the referenced block is declared `coherent` (glslang decorates its
// members `Coherent`; a pointer made from an address is traced to its pointee type, as
// SPIRV-Tools' memory-model upgrade does). Two invocations swap through the reference across
// `memoryBarrierBuffer(); barrier();`: a data race on a plain block, named with the fix; defined
// on a `coherent` one.
#[test]
fn a_buffer_reference_block_is_non_private_only_when_declared_coherent() {
    for (q, racy) in [("", true), ("coherent ", false)] {
        let src = format!(
            "layout(local_size_x = 2) in;\n\
             layout(buffer_reference, std430) {q}buffer D {{ uint b[]; }};\n\
             layout(push_constant) uniform P {{ D d; }};\n\
             void main() {{ uint i = gl_LocalInvocationID.x; d.b[i] = i + 1;\n\
               memoryBarrierBuffer(); barrier(); d.b[2 + i] = d.b[1 - i]; }}\n"
        );
        let j = job(
            &src,
            &[],
            &[("data", "zeros:u32:4")],
            Some("values:u64:@data"),
        );
        let out = run(&j, 1);
        let text = findings(&out.report);
        if racy {
            assert!(
                text.contains("not location-ordered") && text.contains("is not `coherent`"),
                "{text}"
            );
            assert_eq!(out.report.buffers[0].exact, 2, "{text}");
        } else {
            assert!(out.report.ok(), "{text}");
            assert_eq!(out.bytes[0], [1u32, 2, 2, 1].map(u32::to_le_bytes).concat());
        }
    }
}
