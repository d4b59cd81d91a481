//! Unit tests of the decoder's families on modules built with rspirv's builder (no compiler, no
//! Vulkan): what a family maps an instruction to, and the error it gives for what it refuses.

use super::*;
use crate::words::facts::{workgroup_size, Constants};
use rspirv::binary::Assemble;
use rspirv::dr::{Builder, Instruction, Operand};
use rspirv::spirv::{
    AddressingModel, Capability, ExecutionModel, FunctionControl, MemoryModel, Word,
};

/// A compute module of one block: `body` adds instructions to it (it gets the builder and the
/// `uint` type); `globals` may change the module's global instructions afterwards.
fn kernel(
    body: impl FnOnce(&mut Builder, Word),
    globals: impl FnOnce(&mut Vec<Instruction>),
) -> Vec<u32> {
    let mut b = Builder::new();
    b.set_version(1, 3);
    b.capability(Capability::Shader);
    b.capability(Capability::GroupNonUniform);
    b.memory_model(AddressingModel::Logical, MemoryModel::GLSL450);
    let void = b.type_void();
    let fnty = b.type_function(void, vec![]);
    let uint = b.type_int(32, 0);
    let main = b
        .begin_function(void, None, FunctionControl::NONE, fnty)
        .unwrap();
    b.begin_block(None).unwrap();
    body(&mut b, uint);
    b.ret().unwrap();
    b.end_function().unwrap();
    b.entry_point(ExecutionModel::GLCompute, main, "main", vec![]);
    b.execution_mode(main, ExecutionMode::LocalSize, vec![4, 1, 1]);
    let mut m = b.module();
    globals(&mut m.types_global_values);
    m.assemble()
}

/// Adds the module-scope variable `var` of pointer type `ptr` (the builder puts a variable made
/// while a block is open into the function).
fn global_variable(g: &mut Vec<Instruction>, (ptr, var): (Word, Word), class: StorageClass) {
    g.push(Instruction::new(
        SOp::Variable,
        Some(ptr),
        Some(var),
        vec![Operand::StorageClass(class)],
    ));
}

fn error(words: &[u32]) -> String {
    match decode(words, &DecodeOptions::default()) {
        Ok(_) => panic!("decoded"),
        Err(e) => e.to_string(),
    }
}

// GLSL.std.450 (the ext family): IMix is a reserved number with no defined meaning; the error
// names it as the set does, with its number.
#[test]
fn ext_refuses_a_glsl_std_450_instruction_outside_the_compute_subset_by_name() {
    let words = kernel(
        |b, uint| {
            let set = b.ext_inst_import("GLSL.std.450");
            let one = b.constant_bit32(uint, 1);
            b.ext_inst(
                uint,
                None,
                set,
                47,
                vec![
                    Operand::IdRef(one),
                    Operand::IdRef(one),
                    Operand::IdRef(one),
                ],
            )
            .unwrap();
        },
        |_| {},
    );
    let e = error(&words);
    assert!(e.contains("GLSL.std.450 IMix (47)"), "{e}");
}

// SPIR-V "OpGroupNonUniform*": the Execution scope must be Subgroup for the instructions the
// model evaluates (the sync family); another scope is refused, named.
#[test]
fn sync_refuses_a_group_instruction_outside_subgroup_scope_naming_the_scope() {
    let words = kernel(
        |b, uint| {
            let bool_t = b.type_bool();
            let workgroup = b.constant_bit32(uint, 2);
            b.group_non_uniform_elect(bool_t, None, workgroup).unwrap();
        },
        |_| {},
    );
    let e = error(&words);
    assert!(
        e.contains("OpGroupNonUniformElect with scope 2 (Workgroup; only Subgroup scope, 3)"),
        "{e}"
    );
}

// SPIR-V 2.16 "Specialization" and "BuiltIn WorkgroupSize": a specialization-constant composite
// decorated WorkgroupSize overrides LocalSize; its x here is `OpSpecConstantOp IMul` of SpecId 0
// and 8. The globals family folds it, and `words::facts` — what the device runner reads — gives
// the same size.
#[test]
fn globals_fold_a_workgroup_size_through_a_spec_constant_op_as_the_device_runner_does() {
    let ids = std::cell::Cell::new((0, 0, 0));
    let words = kernel(
        |b, uint| {
            let n = b.spec_constant_bit32(uint, 8);
            b.decorate(n, Decoration::SpecId, vec![Operand::LiteralBit32(0)]);
            let eight = b.constant_bit32(uint, 8);
            let one = b.constant_bit32(uint, 1);
            let x = b.id();
            let v3 = b.type_vector(uint, 3);
            let wg = b.spec_constant_composite(v3, vec![x, one, one]);
            b.decorate(
                wg,
                Decoration::BuiltIn,
                vec![Operand::BuiltIn(BuiltIn::WorkgroupSize)],
            );
            ids.set((n, eight, x));
        },
        |g| {
            // The builder cannot give OpSpecConstantOp its operands: add it before the composite.
            let (n_id, eight_id, x_id) = ids.get();
            let uint = g
                .iter()
                .find(|i| i.class.opcode == SOp::TypeInt)
                .and_then(|i| i.result_id)
                .unwrap();
            let at = g
                .iter()
                .position(|i| i.class.opcode == SOp::SpecConstantComposite)
                .unwrap();
            g.insert(
                at,
                Instruction::new(
                    SOp::SpecConstantOp,
                    Some(uint),
                    Some(x_id),
                    vec![
                        Operand::LiteralSpecConstantOpInteger(SOp::IMul),
                        Operand::IdRef(n_id),
                        Operand::IdRef(eight_id),
                    ],
                ),
            );
        },
    );
    let size = |n: Option<u64>| {
        let opts = DecodeOptions {
            spec: n.map(|n| vec![(0, SpecInput::Bits(n))]).unwrap_or_default(),
            ..Default::default()
        };
        decode(&words, &opts).unwrap().local_size
    };
    assert_eq!(size(None), [64, 1, 1]);
    assert_eq!(size(Some(4)), [32, 1, 1]);
    let read = crate::words::read(&words).unwrap();
    let main = read.module.entry_points[0].operands[1].unwrap_id_ref();
    let consts = Constants::new(&read.module, &[(0, 4)]);
    assert_eq!(
        workgroup_size(&read.module, main, &consts),
        Ok(Some([32, 1, 1]))
    );
}

// The arith family: OpSDiv of two 32-bit integers is one integer binary instruction of width 32
// on one slot (its division-by-zero and overflow rules are `words::int`'s, tested there).
#[test]
fn arith_maps_a_signed_division_to_one_integer_instruction() {
    let words = kernel(
        |b, uint| {
            let int = b.type_int(32, 1);
            let (x, y) = (b.constant_bit32(int, 7), b.constant_bit32(int, 2));
            b.s_div(int, None, x, y).unwrap();
            let _ = uint;
        },
        |_| {},
    );
    let k = decode(&words, &DecodeOptions::default()).unwrap();
    let insts: Vec<&Inst> = k.funcs[k.entry as usize].blocks[0].insts.iter().collect();
    assert!(
        insts.iter().any(|i| matches!(
            i,
            Inst::IntBin {
                op: IntBin::SDiv,
                w: 32,
                n: 1,
                ..
            }
        )),
        "{insts:?}"
    );
}

// The access family and the validate pass: SPIR-V's Input storage class is read-only (a store to
// it is invalid), so the decoder refuses it with the storage class named, before anything runs.
#[test]
fn access_refuses_a_store_to_input_memory() {
    let ids = std::cell::Cell::new((0, 0));
    let words = kernel(
        |b, uint| {
            let ptr = b.type_pointer(None, StorageClass::Input, uint);
            let v = b.id();
            let one = b.constant_bit32(uint, 1);
            b.store(v, one, None, vec![]).unwrap();
            ids.set((ptr, v));
        },
        |g| global_variable(g, ids.get(), StorageClass::Input),
    );
    let e = error(&words);
    assert!(e.contains("a store to the read-only Input variable"), "{e}");
}

// The functions family: Vulkan forbids recursion (a static cycle in the call graph); a function
// that calls itself is refused by name before anything runs.
#[test]
fn functions_refuse_recursion_naming_the_function() {
    let mut b = Builder::new();
    b.set_version(1, 3);
    b.capability(Capability::Shader);
    b.memory_model(AddressingModel::Logical, MemoryModel::GLSL450);
    let void = b.type_void();
    let fnty = b.type_function(void, vec![]);
    let f = b.id();
    b.begin_function(void, Some(f), FunctionControl::NONE, fnty)
        .unwrap();
    b.begin_block(None).unwrap();
    b.function_call(void, None, f, vec![]).unwrap();
    b.ret().unwrap();
    b.end_function().unwrap();
    b.name(f, "again");
    let main = b
        .begin_function(void, None, FunctionControl::NONE, fnty)
        .unwrap();
    b.begin_block(None).unwrap();
    b.function_call(void, None, f, vec![]).unwrap();
    b.ret().unwrap();
    b.end_function().unwrap();
    b.entry_point(ExecutionModel::GLCompute, main, "main", vec![]);
    b.execution_mode(main, ExecutionMode::LocalSize, vec![1, 1, 1]);
    let e = error(&b.module().assemble());
    assert!(e.contains("recursion") && e.contains("again"), "{e}");
}

// Vulkan, "Offset and Stride Assignment" (explicit layout: every member's Offset, an array's
// ArrayStride, a matrix member's MatrixStride and RowMajor): in the block
// `{ float a; /* Offset 16, ArrayStride 48, MatrixStride 16, RowMajor */ mat3 m[2]; }` the last
// element of `m` starts at 16 + 48 and, row-major, holds 3 rows 16 bytes apart of 3 floats, so the
// block's last byte is at 16 + 48 + 2·16 + 3·4 = 108. The globals family (the interpreter's layout)
// and `words::layout` (what the device runner checks a dispatch against) both say 108.
#[test]
fn globals_and_words_layout_agree_on_a_block_of_row_major_matrices() {
    let ids = std::cell::Cell::new((0, 0));
    let words = kernel(
        |b, uint| {
            let float = b.type_float(32, None);
            let v3 = b.type_vector(float, 3);
            let m3 = b.type_matrix(v3, 3);
            let two = b.constant_bit32(uint, 2);
            let arr = b.type_array(m3, two);
            b.decorate(
                arr,
                Decoration::ArrayStride,
                vec![Operand::LiteralBit32(48)],
            );
            let st = b.type_struct(vec![float, arr]);
            b.decorate(st, Decoration::Block, vec![]);
            let lit = |x| vec![Operand::LiteralBit32(x)];
            b.member_decorate(st, 0, Decoration::Offset, lit(0));
            b.member_decorate(st, 1, Decoration::Offset, lit(16));
            b.member_decorate(st, 1, Decoration::MatrixStride, lit(16));
            b.member_decorate(st, 1, Decoration::RowMajor, vec![]);
            let ptr = b.type_pointer(None, StorageClass::StorageBuffer, st);
            let var = b.id();
            b.decorate(var, Decoration::DescriptorSet, lit(0));
            b.decorate(var, Decoration::Binding, lit(3));
            ids.set((ptr, var));
        },
        |g| global_variable(g, ids.get(), StorageClass::StorageBuffer),
    );
    let k = decode(&words, &DecodeOptions::default()).unwrap();
    let o = k
        .objects
        .iter()
        .find(|o| o.binding == Some((0, 3)))
        .unwrap();
    assert_eq!(o.size, 108);
    let read = crate::words::read(&words).unwrap();
    let consts = Constants::new(&read.module, &[]);
    let ix = crate::words::layout::Index::new(&read.module);
    let iface = crate::words::layout::interface(&ix, &read.module, &consts);
    let b = &iface.bindings[&(0, 3)];
    assert_eq!(
        (b.size, b.runtime_array, b.array),
        (Some(108), false, false)
    );
}

// SPIR-V 2.16.1, Universal Validation Rules: a variable inside a function has storage class
// Function. A StorageBuffer variable there (what rspirv's builder makes of a variable declared
// while a block is open) is malformed, named.
#[test]
fn functions_refuse_a_variable_of_another_storage_class_inside_a_function() {
    let words = kernel(
        |b, uint| {
            let ptr = b.type_pointer(None, StorageClass::StorageBuffer, uint);
            let v = b.variable(ptr, None, StorageClass::StorageBuffer, None);
            b.name(v, "stray");
        },
        |_| {},
    );
    let e = error(&words);
    assert!(
        e.contains("OpVariable stray in function") && e.contains("SPIR-V 2.16.1"),
        "{e}"
    );
}

// Issue 18 §3: one `match` routes opcodes to families. Every opcode the router sends to a family is
// one that family maps: an instruction of it (here without operands, on a module of nothing) gets
// that family's own error or instruction — never the "sent to the wrong family" error, and no panic.
#[test]
fn the_router_sends_every_opcode_to_a_family_that_maps_it() {
    let words = kernel(|_, _| {}, |_| {});
    let read = crate::words::read(&words).unwrap();
    let opts = DecodeOptions::default();
    let mut routed = 0;
    for n in 0..=u32::from(u16::MAX) {
        let Some(op) = SOp::from_u32(n) else {
            continue;
        };
        let Some(f) = family(op) else {
            continue;
        };
        routed += 1;
        let mut d = Decoder::new(&read.module, &opts).unwrap();
        let i = Instruction::new(op, Some(1), Some(1000), vec![]);
        if let Err(e) = d.inst(&i) {
            assert!(!e.to_string().contains("internal:"), "{op:?} ({f:?}): {e}");
        }
    }
    // 70 arithmetic, 23 composite, 14 access, 17 atomic, 38 subgroup (+ nothing, ext, barriers, call)
    assert!(routed >= 160, "only {routed} opcodes routed");
}

/// A `Uniform` block `{ uint }` named `params` at set 0 binding 0: (its pointer type, the
/// member's pointer type, the variable's id — to be added at module scope).
fn uniform_block(b: &mut Builder, uint: Word) -> (Word, Word, Word) {
    let st = b.type_struct(vec![uint]);
    b.decorate(st, Decoration::Block, vec![]);
    b.member_decorate(st, 0, Decoration::Offset, vec![Operand::LiteralBit32(0)]);
    let ptr = b.type_pointer(None, StorageClass::Uniform, st);
    let eptr = b.type_pointer(None, StorageClass::Uniform, uint);
    let v = b.id();
    b.decorate(v, Decoration::DescriptorSet, vec![Operand::LiteralBit32(0)]);
    b.decorate(v, Decoration::Binding, vec![Operand::LiteralBit32(0)]);
    b.name(v, "params");
    (ptr, eptr, v)
}

// The validate pass. Vulkan: variables in the Uniform storage class that are Block-decorated are
// read-only ("Uniform buffers ... cannot be written", VUID-StandaloneSpirv-OpStore / the
// Storage Classes section of SPIR-V: Uniform is "shared externally, ... read-only"). The store
// sits in a selection on a constant `false`, so it never runs: the rule is static, and the decoder
// refuses the module, naming the variable, before anything runs.
#[test]
fn validate_refuses_a_store_to_a_uniform_block_even_in_code_that_never_runs() {
    let ids = std::cell::Cell::new((0, 0));
    let words = kernel(
        |b, uint| {
            let (ptr, eptr, v) = uniform_block(b, uint);
            let bool_t = b.type_bool();
            let never = b.constant_false(bool_t);
            let zero = b.constant_bit32(uint, 0);
            let (then, merge) = (b.id(), b.id());
            b.selection_merge(merge, spirv::SelectionControl::NONE)
                .unwrap();
            b.branch_conditional(never, then, merge, vec![]).unwrap();
            b.begin_block(Some(then)).unwrap();
            let e = b.access_chain(eptr, None, v, vec![zero]).unwrap();
            b.store(e, zero, None, vec![]).unwrap();
            b.branch(merge).unwrap();
            b.begin_block(Some(merge)).unwrap();
            ids.set((ptr, v));
        },
        |g| global_variable(g, ids.get(), StorageClass::Uniform),
    );
    let e = error(&words);
    assert!(
        e.contains("a store to the read-only Uniform variable params"),
        "{e}"
    );
}

// The validate pass, atomics: an atomic read-modify-write writes, so on a read-only (Uniform)
// variable it is refused like a store.
#[test]
fn validate_refuses_an_atomic_write_to_a_uniform_block() {
    let ids = std::cell::Cell::new((0, 0));
    let words = kernel(
        |b, uint| {
            let (ptr, eptr, v) = uniform_block(b, uint);
            let (zero, one, device) = (
                b.constant_bit32(uint, 0),
                b.constant_bit32(uint, 1),
                b.constant_bit32(uint, 1),
            );
            let e = b.access_chain(eptr, None, v, vec![zero]).unwrap();
            b.atomic_i_add(uint, None, e, device, zero, one).unwrap();
            ids.set((ptr, v));
        },
        |g| global_variable(g, ids.get(), StorageClass::Uniform),
    );
    let e = error(&words);
    assert!(
        e.contains("an atomic write to the read-only Uniform variable params"),
        "{e}"
    );
}

// The validate pass, structured control flow. SPIR-V 2.11 "Structured Control Flow": an OpSwitch
// is the last instruction of a selection header, so it follows an OpSelectionMerge.
#[test]
fn validate_refuses_a_switch_without_a_selection_merge() {
    let words = kernel(
        |b, uint| {
            let zero = b.constant_bit32(uint, 0);
            let next = b.id();
            b.switch(zero, next, vec![]).unwrap();
            b.begin_block(Some(next)).unwrap();
        },
        |_| {},
    );
    let e = error(&words);
    assert!(e.contains("OpSwitch without OpSelectionMerge"), "{e}");
}

// The validate pass, structured control flow. SPIR-V 2.11 "Structured Control Flow": an
// OpSelectionMerge "must immediately precede either an OpBranchConditional or OpSwitch
// instruction", so a selection header that ends with OpReturn is refused, before anything runs.
#[test]
fn validate_refuses_a_selection_header_that_ends_with_a_return() {
    let words = kernel(
        |b, _| {
            let merge = b.id();
            b.selection_merge(merge, spirv::SelectionControl::NONE)
                .unwrap();
            b.ret().unwrap();
            b.begin_block(Some(merge)).unwrap();
        },
        |_| {},
    );
    let e = error(&words);
    assert!(
        e.contains("a selection header must end with a branch or switch (SPIR-V 2.11"),
        "{e}"
    );
}

// The validate pass, images. Vulkan: a storage image decorated NonWritable may not be written
// (SPIR-V 2.16.1 "Universal Validation Rules", NonWritable: "the memory object ... is not
// written"); OpImageWrite to one is refused at decode time, naming the image, even where no
// invocation reaches it.
#[test]
fn validate_refuses_an_image_write_to_a_non_writable_storage_image() {
    let ids = std::cell::Cell::new((0, 0));
    let words = kernel(
        |b, uint| {
            let img_t = b.type_image(
                uint,
                spirv::Dim::Dim2D,
                0,
                0,
                0,
                2,
                spirv::ImageFormat::R32ui,
                None,
            );
            let ptr = b.type_pointer(None, StorageClass::UniformConstant, img_t);
            let v = b.id();
            b.decorate(v, Decoration::DescriptorSet, vec![Operand::LiteralBit32(0)]);
            b.decorate(v, Decoration::Binding, vec![Operand::LiteralBit32(0)]);
            b.decorate(v, Decoration::NonWritable, vec![]);
            b.name(v, "picture");
            let int = b.type_int(32, 1);
            let ivec2 = b.type_vector(int, 2);
            let zero = b.constant_bit32(int, 0);
            let at = b.constant_composite(ivec2, vec![zero, zero]);
            let texel = b.constant_bit32(uint, 7);
            let image = b.load(img_t, None, v, None, vec![]).unwrap();
            b.image_write(image, at, texel, None, vec![]).unwrap();
            ids.set((ptr, v));
        },
        |g| global_variable(g, ids.get(), StorageClass::UniformConstant),
    );
    let e = error(&words);
    assert!(
        e.contains("OpImageWrite to picture, which the shader cannot write (NonWritable"),
        "{e}"
    );
}

// The sync family. SPIR-V "OpGroupNonUniformBitwiseAnd": "Result Type must be a scalar or vector
// of integer type"; the catalogue's `subgroupAnd` takes integers and booleans. A bitwise and of
// floats is refused, naming the instruction, the type and what the operation takes.
#[test]
fn sync_refuses_a_group_operation_on_a_type_it_does_not_take() {
    let words = kernel(
        |b, uint| {
            let float = b.type_float(32, None);
            let one = b.constant_bit32(float, 0x3f80_0000);
            let subgroup = b.constant_bit32(uint, 3);
            b.group_non_uniform_bitwise_and(
                float,
                None,
                subgroup,
                spirv::GroupOperation::Reduce,
                one,
                None,
            )
            .unwrap();
        },
        |_| {},
    );
    let e = error(&words);
    assert!(
        e.contains("OpGroupNonUniformBitwiseAnd on f32 values (subgroupAnd takes integer and bool"),
        "{e}"
    );
}

// The sync family. SPIR-V "Group Operation": PartitionedReduceNV (6; rspirv names it
// PartitionedReduceEXT) belongs to SPV_NV_shader_subgroup_partitioned, which the model's
// catalogue has no operation for; an OpGroupNonUniformIAdd with it is not any of the catalogue's
// adds (reduce, the two scans, clustered reduce) and is refused as unsupported, naming the group
// operation.
#[test]
fn sync_refuses_a_group_operation_the_catalogue_has_not_naming_it() {
    let words = kernel(
        |b, uint| {
            let one = b.constant_bit32(uint, 1);
            let subgroup = b.constant_bit32(uint, 3);
            b.group_non_uniform_i_add(
                uint,
                None,
                subgroup,
                spirv::GroupOperation::PartitionedReduceNV,
                one,
                None,
            )
            .unwrap();
        },
        |_| {},
    );
    let e = error(&words);
    assert!(
        e.contains("unsupported")
            && e.contains("OpGroupNonUniformIAdd with group operation PartitionedReduceEXT"),
        "{e}"
    );
}

// The router (`family`, the one place opcodes are routed): an instruction no family maps is
// refused as unsupported, naming it — here SPV_NV_shader_subgroup_partitioned's
// OpGroupNonUniformPartitionNV, which the model's catalogue has no operation for, of a value
// computed at run time (so no family's reading of its operands decides the error).
#[test]
fn functions_refuse_an_instruction_no_family_maps_as_unsupported_naming_it() {
    let words = kernel(
        |b, uint| {
            let one = b.constant_bit32(uint, 1);
            let two = b.i_add(uint, None, one, one).unwrap();
            let uvec4 = b.type_vector(uint, 4);
            let r = b.id();
            b.insert_into_block(
                rspirv::dr::InsertPoint::End,
                Instruction::new(
                    SOp::GroupNonUniformPartitionEXT,
                    Some(uvec4),
                    Some(r),
                    vec![Operand::IdRef(two)],
                ),
            )
            .unwrap();
        },
        |_| {},
    );
    let e = error(&words);
    assert!(
        e.contains("unsupported") && e.contains("the instruction OpGroupNonUniformPartitionEXT"),
        "{e}"
    );
}

// The validate pass, inputs. Vulkan "Built-In Variables": FragCoord is valid only in the Fragment
// execution model; a compute entry point whose interface has it is refused, the built-in and the
// variable named.
#[test]
fn validate_refuses_an_input_built_in_a_compute_shader_does_not_have() {
    let mut b = Builder::new();
    b.set_version(1, 3);
    b.capability(Capability::Shader);
    b.memory_model(AddressingModel::Logical, MemoryModel::GLSL450);
    let void = b.type_void();
    let fnty = b.type_function(void, vec![]);
    let float = b.type_float(32, None);
    let v4 = b.type_vector(float, 4);
    let ptr = b.type_pointer(None, StorageClass::Input, v4);
    let coord = b.variable(ptr, None, StorageClass::Input, None);
    b.decorate(
        coord,
        Decoration::BuiltIn,
        vec![Operand::BuiltIn(BuiltIn::FragCoord)],
    );
    b.name(coord, "where");
    let main = b
        .begin_function(void, None, FunctionControl::NONE, fnty)
        .unwrap();
    b.begin_block(None).unwrap();
    b.ret().unwrap();
    b.end_function().unwrap();
    b.entry_point(ExecutionModel::GLCompute, main, "main", vec![coord]);
    b.execution_mode(main, ExecutionMode::LocalSize, vec![4, 1, 1]);
    let e = error(&b.module().assemble());
    assert!(
        e.contains("the built-in FragCoord of input variable where (not a compute built-in)"),
        "{e}"
    );
}

/// A Function variable `uint v[4]` with `v[2] = 7` and `v[i]` for an index `i`: the constant
/// chain is folded (`dyn_index` false), the other is not.
fn local_array_chain(dyn_index: bool) -> Kernel {
    let words = kernel(
        |b, uint| {
            let four = b.constant_bit32(uint, 4);
            let arr = b.type_array(uint, four);
            let parr = b.type_pointer(None, StorageClass::Function, arr);
            let puint = b.type_pointer(None, StorageClass::Function, uint);
            let v = b.variable(parr, None, StorageClass::Function, None);
            let (two, seven) = (b.constant_bit32(uint, 2), b.constant_bit32(uint, 7));
            let i = if dyn_index {
                b.i_add(uint, None, two, two).unwrap()
            } else {
                two
            };
            let p = b.access_chain(puint, None, v, vec![i]).unwrap();
            b.store(p, seven, None, vec![]).unwrap();
            b.load(uint, None, p, None, vec![]).unwrap();
        },
        |_| {},
    );
    decode(&words, &DecodeOptions::default()).expect("decodes")
}

fn chains(k: &Kernel) -> usize {
    k.funcs
        .iter()
        .flat_map(|f| &f.blocks)
        .flat_map(|b| &b.insts)
        .filter(|i| matches!(i, Inst::AccessChain { .. }))
        .count()
}

// An access chain of constant steps from a variable points at one place in every lane: its
// register is a constant (the variable's object, the steps' byte offset), nothing runs for it,
// and the block still counts it as an executed instruction.
#[test]
fn a_constant_access_chain_into_a_variable_is_a_constant_pointer() {
    let k = local_array_chain(false);
    assert_eq!(chains(&k), 0, "the chain is folded");
    let blk = &k.funcs[k.entry as usize].blocks[0];
    assert_eq!(blk.folded, 1);
    let var = k
        .objects
        .iter()
        .position(|o| o.storage == Storage::Function)
        .expect("the variable");
    let want = crate::spirv::memory::Ptr::new(ObjectId::new(var as u32), 8).bits();
    assert!(
        k.constants.iter().any(|c| *c.bits == [want]),
        "a constant pointer to byte 8 of the variable"
    );
    // An index the decoder cannot know keeps the chain.
    let k = local_array_chain(true);
    assert_eq!(chains(&k), 1);
    assert_eq!(k.funcs[k.entry as usize].blocks[0].folded, 0);
}
