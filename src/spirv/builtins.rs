//! Built-in input variables: each filled for every lane of a workgroup before it runs — the
//! subgroup built-ins from the model (one definition), the ids from the workgroup layout.

use crate::model::{evaluate, info, Op, OpCall, Outcome};
use crate::spirv::error::SpirvError;
use crate::spirv::exec::Wg;
use crate::spirv::inst::*;
use crate::spirv::prov::Taint;
use rspirv::spirv::BuiltIn;

impl Wg<'_, '_> {
    /// Fills a built-in input variable for every lane of the workgroup: the subgroup built-ins
    /// from the model (one definition), the ids from the workgroup layout.
    pub(crate) fn fill_builtin(&mut self, obj: ObjectId) -> Result<(), SpirvError> {
        let k = self.k;
        let o = &k.objects[obj.index()];
        let Some(b) = o.builtin else {
            return Ok(());
        };
        // The ids of the workgroup change from one workgroup to the next; the others are the same
        // for every workgroup of the dispatch (and input variables are never written): filled
        // once per workgroup state.
        let per_workgroup = matches!(b, BuiltIn::WorkgroupId | BuiltIn::GlobalInvocationId);
        if !per_workgroup && self.inputs_filled[obj.index()] {
            return Ok(());
        }
        let (lanes, n) = (self.lanes, self.n);
        // The workgroup's id is the same in every lane: a fill of each component's row.
        if b == BuiltIn::WorkgroupId {
            for (c, v) in self.wg_id.iter().enumerate() {
                let (row, trow) = (
                    (o.base as usize + c) * lanes,
                    (o.tbase as usize + c) * lanes,
                );
                self.lmem[row..row + lanes].fill(*v);
                self.ltaint[trow..trow + lanes].fill(Taint::NONE);
            }
            return Ok(());
        }
        let size = self.d.cfg.size;
        let wgs = self.d.cfg.workgroups;
        let ls = k.local_size;
        let subgroups = self.d.map.subgroups() as u32;
        // Per lane: the value's u32 components (built-ins are 32-bit: one unit per word).
        let put = |wg: &mut Self, s: usize, comps: &[u32]| {
            for (c, v) in comps.iter().enumerate() {
                wg.lmem[(o.base as usize + c) * lanes + s] = *v;
                wg.ltaint[(o.tbase as usize + c) * lanes + s] = Taint::NONE;
            }
        };
        // The subgroup built-ins a model op defines, evaluated on a full subgroup.
        let from_model = |op: Op| -> Result<Vec<Outcome>, SpirvError> {
            let call = OpCall::new(info(op), size, Default::default())
                .map_err(|e| SpirvError::Setup(e.to_string()))?;
            evaluate(&call, size.full_mask(), &[]).map_err(|e| SpirvError::Setup(e.to_string()))
        };
        let model_vals = match b {
            BuiltIn::SubgroupSize => Some(from_model(Op::SubgroupSize)?),
            BuiltIn::SubgroupLocalInvocationId => Some(from_model(Op::InvocationId)?),
            BuiltIn::SubgroupEqMask => Some(from_model(Op::LaneMask(crate::model::MaskKind::Eq))?),
            BuiltIn::SubgroupGeMask => Some(from_model(Op::LaneMask(crate::model::MaskKind::Ge))?),
            BuiltIn::SubgroupGtMask => Some(from_model(Op::LaneMask(crate::model::MaskKind::Gt))?),
            BuiltIn::SubgroupLeMask => Some(from_model(Op::LaneMask(crate::model::MaskKind::Le))?),
            BuiltIn::SubgroupLtMask => Some(from_model(Op::LaneMask(crate::model::MaskKind::Lt))?),
            _ => None,
        };
        for g in 0..self.groups {
            for l in 0..n {
                let s = g * n + l;
                let inv = self.d.map.invocation(g as u32, l as u32);
                // (three divisions a lane: only for the built-ins that read it)
                let local = || {
                    inv.map(|i| self.d.map.shape().local_id(i))
                        .unwrap_or([0; 3])
                };
                let mut comps = [0u32; 4];
                let len = match b {
                    BuiltIn::LocalInvocationId => put3(&mut comps, local()),
                    BuiltIn::LocalInvocationIndex => put1(&mut comps, inv.unwrap_or(0)),
                    BuiltIn::WorkgroupId => put3(&mut comps, self.wg_id),
                    BuiltIn::NumWorkgroups => put3(&mut comps, wgs),
                    BuiltIn::GlobalInvocationId => {
                        let local = local();
                        put3(
                            &mut comps,
                            std::array::from_fn(|a| self.wg_id[a] * ls[a] + local[a]),
                        )
                    }
                    BuiltIn::WorkgroupSize => put3(&mut comps, ls),
                    BuiltIn::NumSubgroups => put1(&mut comps, subgroups),
                    BuiltIn::SubgroupId => put1(&mut comps, g as u32),
                    _ => match &model_vals {
                        Some(v) => match v[l] {
                            Outcome::Defined(x) => {
                                let bits = x.bits();
                                for (c, b) in bits.iter().take(4).enumerate() {
                                    comps[c] = *b as u32;
                                }
                                bits.len().min(4)
                            }
                            _ => 1,
                        },
                        None => {
                            return Err(SpirvError::unsupported(format!(
                                "the built-in {b:?} (not a compute built-in)"
                            )))
                        }
                    },
                };
                put(self, s, &comps[..len]);
            }
        }
        self.inputs_filled[obj.index()] = true;
        Ok(())
    }
}

/// Writes `v` as the first component of `c`; one component.
fn put1(c: &mut [u32; 4], v: u32) -> usize {
    c[0] = v;
    1
}

/// Writes `v` as the first three components of `c`; three components.
fn put3(c: &mut [u32; 4], v: [u32; 3]) -> usize {
    c[..3].copy_from_slice(&v);
    3
}
