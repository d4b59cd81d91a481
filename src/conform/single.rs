//! Running explicit cases (not random batches) on a device: what the proptest "model == device"
//! properties and the fault-injection tests use. Pipelines are cached per kernel and shape.

use crate::conform::cases::Batch;
use crate::conform::compare::{compare_batch, BatchCtx, Stats};
use crate::conform::glsl::{
    case_record, generate, input_record, CaseGroup, Entry, Fault, KernelSpec, IN_WORDS, OUT_WORDS,
    SENTINEL,
};
use crate::model::{info, ArgKind, Ballot, Op, SubgroupSize, ValueType, WorkgroupShape};
use crate::vulkan::{compile_glsl, Context, Kernel, KernelOptions, SpecValue, VkError};
use std::collections::HashMap;
use std::sync::Mutex;

/// One explicit case: an op on one workgroup of `shape`, with every invocation's inputs.
#[derive(Clone, Debug)]
pub struct Case {
    /// the operation
    pub op: Op,
    /// its value type (`None` for ops without a value)
    pub ty: Option<ValueType>,
    /// cluster size of clustered ops and clustered rotate
    pub cluster: Option<u32>,
    /// subgroup size (required through size control when the device has it)
    pub size: SubgroupSize,
    /// workgroup shape
    pub shape: WorkgroupShape,
    /// per invocation: does it execute the op?
    pub preds: Vec<bool>,
    /// per invocation: value bits per component
    pub values: Vec<[u64; 4]>,
    /// per invocation: id / mask / delta / index
    pub lane_args: Vec<u32>,
    /// the uniform argument (broadcast id, quad index, rotate delta)
    pub uniform_arg: u32,
    /// the uniform ballot operand
    pub ballot: u128,
}

/// Runs explicit cases, caching compiled kernels.
pub struct CaseRunner<'a> {
    ctx: &'a Context,
    fault: Option<Fault>,
    cache: Mutex<HashMap<(String, WorkgroupShape, u32), Kernel>>,
}

impl<'a> CaseRunner<'a> {
    /// A runner on `ctx`; `fault` injects a deliberate bug into every kernel (tests only).
    pub fn new(ctx: &'a Context, fault: Option<Fault>) -> Self {
        CaseRunner {
            ctx,
            fault,
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// Runs `case` and compares every lane with the model.
    pub fn run(&self, case: &Case) -> Result<Stats, VkError> {
        let o = info(case.op);
        let category = o.category;
        let entry = Entry {
            op: case.op,
            ty: case.ty,
            cluster: if o.args.contains(&ArgKind::Cluster) {
                case.cluster.or(Some(1))
            } else {
                None
            },
        };
        let spec = KernelSpec::single(CaseGroup {
            category,
            ty: case.ty,
            entries: vec![entry],
        });
        let name = spec.name();
        let key = (
            format!("{name}/{}", case.op_key()),
            case.shape,
            case.size.get(),
        );
        let kernel = {
            let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            match cache.get(&key) {
                Some(k) => k.clone(),
                None => {
                    let src = generate(&spec, self.fault);
                    let words = compile_glsl(&src, &name, true)?;
                    let k = self.ctx.kernel(
                        &words,
                        &KernelOptions {
                            spec: vec![
                                (0, SpecValue::U32(case.shape.x)),
                                (1, SpecValue::U32(case.shape.y)),
                                (2, SpecValue::U32(case.shape.z)),
                            ],
                            required_subgroup_size: self
                                .ctx
                                .caps
                                .size_control
                                .then_some(case.size.get()),
                        },
                    )?;
                    cache.insert(key, k.clone());
                    k
                }
            }
        };
        let inv = case.shape.invocations() as usize;
        let mut inputs = Vec::with_capacity(inv * IN_WORDS);
        for k in 0..inv {
            inputs.extend_from_slice(&input_record(
                case.preds.get(k).copied().unwrap_or(false),
                case.lane_args.get(k).copied().unwrap_or(0),
                case.values.get(k).copied().unwrap_or([0; 4]),
            ));
        }
        let b = case.ballot;
        let batch = Batch {
            shape: case.shape,
            workgroups: 1,
            cases: case_record(0, case.uniform_arg, Ballot(b).words()).to_vec(),
            inputs,
        };
        let cb = self.ctx.host_buffer(&batch.cases)?;
        let ib = self.ctx.host_buffer(&batch.inputs)?;
        let ob = self.ctx.host_buffer(&vec![SENTINEL; inv * OUT_WORDS])?;
        self.ctx.dispatch(
            &kernel,
            &[(
                vec![cb.into_bytes(), ib.into_bytes(), ob.clone().into_bytes()],
                [1, 1, 1],
            )],
        )?;
        let words = ob
            .read()
            .map_err(|e| VkError::vk("reading results", e))?
            .to_vec();
        Ok(compare_batch(
            &BatchCtx {
                spec: &spec,
                kernel: name,
                size: case.size,
            },
            &batch,
            &words,
        ))
    }
}

impl Case {
    fn op_key(&self) -> String {
        format!("{:?}{:?}", self.op, self.cluster)
    }
}
