//! Workgroups: how local invocations are placed into subgroups and lanes.
//!
//! Vulkan gives no relation between `gl_LocalInvocationID` and (`gl_SubgroupID`,
//! `gl_SubgroupInvocationID`) (specs/RULES.md, "Layout"). The model therefore makes the
//! layout a parameter: invocations are put in a chosen order and dealt to subgroups of `size`
//! lanes in that order. If the workgroup is not a multiple of the subgroup size, the last subgroup
//! is partial and its upper lanes are inactive (GL_KHR_shader_subgroup, 3.8: "invocations may be
//! inactive within a subgroup if the local workgroup size is not a multiple of the subgroup size").

use crate::model::error::ModelError;
use crate::model::params::{LaneMask, SubgroupSize};
use std::fmt;
use std::str::FromStr;

/// The largest workgroup the model accepts (far above any device's maxComputeWorkGroupInvocations).
pub const MAX_INVOCATIONS: u32 = 1 << 20;

/// A workgroup shape `x × y × z`.
///
/// ```
/// use lockstep::model::WorkgroupShape;
/// let s: WorkgroupShape = "3,5,7".parse().unwrap();
/// assert_eq!(s.invocations(), 105);
/// assert_eq!(s.local_id(4), [1, 1, 0]); // x fastest
/// assert_eq!(s.index([1, 1, 0]), 4);
/// assert_eq!(s.to_string(), "3x5x7");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct WorkgroupShape {
    /// width
    pub x: u32,
    /// height
    pub y: u32,
    /// depth
    pub z: u32,
}

impl WorkgroupShape {
    /// Validates the shape: every dimension ≥ 1, at most [`MAX_INVOCATIONS`] in all.
    ///
    /// ```
    /// use lockstep::model::WorkgroupShape;
    /// assert_eq!(WorkgroupShape::new(3, 5, 7).unwrap().invocations(), 105);
    /// assert!(WorkgroupShape::new(0, 1, 1).is_err());
    /// ```
    pub fn new(x: u32, y: u32, z: u32) -> Result<Self, ModelError> {
        let total = x as u64 * y as u64 * z as u64;
        if x == 0 || y == 0 || z == 0 || total > MAX_INVOCATIONS as u64 {
            return Err(ModelError::InvalidWorkgroup {
                x,
                y,
                z,
                max: MAX_INVOCATIONS,
            });
        }
        Ok(WorkgroupShape { x, y, z })
    }

    /// Number of invocations.
    pub fn invocations(self) -> u32 {
        self.x * self.y * self.z
    }

    /// The local invocation id of the invocation with row-major index `i` (x fastest).
    pub fn local_id(self, i: u32) -> [u32; 3] {
        [i % self.x, (i / self.x) % self.y, i / (self.x * self.y)]
    }

    /// Row-major index (`gl_LocalInvocationIndex`) of a local id.
    pub fn index(self, id: [u32; 3]) -> u32 {
        id[0] + self.x * (id[1] + self.y * id[2])
    }
}

impl fmt::Display for WorkgroupShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}x{}", self.x, self.y, self.z)
    }
}

impl FromStr for WorkgroupShape {
    type Err = ModelError;
    /// `X`, `X,Y`, `X,Y,Z` (or with `x` as separator).
    fn from_str(s: &str) -> Result<Self, ModelError> {
        let bad = || ModelError::InvalidWorkgroup {
            x: 0,
            y: 0,
            z: 0,
            max: MAX_INVOCATIONS,
        };
        let parts: Vec<u32> = s
            .split([',', 'x'])
            .map(|p| p.trim().parse::<u32>().map_err(|_| bad()))
            .collect::<Result<_, _>>()?;
        match parts.as_slice() {
            [x] => WorkgroupShape::new(*x, 1, 1),
            [x, y] => WorkgroupShape::new(*x, *y, 1),
            [x, y, z] => WorkgroupShape::new(*x, *y, *z),
            _ => Err(bad()),
        }
    }
}

/// How invocations are ordered before being dealt to subgroups.
///
/// ```
/// use lockstep::model::{LaneOrder, SubgroupSize, WorkgroupShape};
/// assert_eq!("column-major".parse::<LaneOrder>().unwrap(), LaneOrder::COLUMN_MAJOR);
/// assert_eq!(LaneOrder::Linear([2, 0, 1]).to_string(), "zxy");
/// assert_eq!(LaneOrder::all().len(), 7);
/// // A 1D workgroup: every axis order places it the same way.
/// let one_d = WorkgroupShape::new(64, 1, 1).unwrap();
/// assert_eq!(LaneOrder::distinct_for(one_d, SubgroupSize::new(32).unwrap()), [LaneOrder::ROW_MAJOR]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LaneOrder {
    /// Linear order with the given axis fastest, then the second, then the third
    /// (`[0, 1, 2]` = x fastest = row-major, the common one; `[1, 0, 2]` = column-major).
    Linear([u8; 3]),
    /// 2×2 quads in the x-y plane (quad lanes 0..3 = (x,y), (x+1,y), (x,y+1), (x+1,y+1)), quads in
    /// row-major order — the placement derivative-capable compute uses. Needs even x and y.
    Quads,
    /// As a device placed them, learnt by running a probe there
    /// ([`WorkgroupLayout::from_placements`]); not one the model can make by itself.
    Device,
}

impl LaneOrder {
    /// Row-major: x fastest.
    pub const ROW_MAJOR: LaneOrder = LaneOrder::Linear([0, 1, 2]);
    /// Column-major: y fastest (seen on real drivers for 2D workgroups).
    pub const COLUMN_MAJOR: LaneOrder = LaneOrder::Linear([1, 0, 2]);

    /// Every layout the model offers: the six axis orders and quads.
    pub fn all() -> Vec<LaneOrder> {
        let mut v: Vec<LaneOrder> = [
            [0, 1, 2],
            [1, 0, 2],
            [0, 2, 1],
            [2, 0, 1],
            [1, 2, 0],
            [2, 1, 0],
        ]
        .into_iter()
        .map(LaneOrder::Linear)
        .collect();
        v.push(LaneOrder::Quads);
        v
    }

    /// The layouts valid for `shape` that give distinct placements (for a 2D workgroup: row-major,
    /// column-major and, with even sides, quads).
    pub fn distinct_for(shape: WorkgroupShape, size: SubgroupSize) -> Vec<LaneOrder> {
        let mut seen: Vec<Vec<Placement>> = Vec::new();
        let mut out = Vec::new();
        for l in LaneOrder::all() {
            if let Ok(w) = WorkgroupLayout::new(shape, size, l)
                && !seen.contains(&w.placements)
            {
                seen.push(w.placements.clone());
                out.push(l);
            }
        }
        out
    }
}

impl fmt::Display for LaneOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LaneOrder::Linear([0, 1, 2]) => f.write_str("row-major"),
            LaneOrder::Linear([1, 0, 2]) => f.write_str("column-major"),
            LaneOrder::Linear(o) => {
                let n = |a: u8| ['x', 'y', 'z'][a as usize % 3];
                write!(f, "{}{}{}", n(o[0]), n(o[1]), n(o[2]))
            }
            LaneOrder::Quads => f.write_str("quads"),
            LaneOrder::Device => f.write_str("device"),
        }
    }
}

impl FromStr for LaneOrder {
    type Err = String;
    /// `row-major`, `column-major`, `quads`, an axis order such as `yzx` (first = fastest), or
    /// `device` (the device's own, probed).
    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim().to_ascii_lowercase();
        if t == "device" {
            return Ok(LaneOrder::Device);
        }
        LaneOrder::all()
            .into_iter()
            .find(|l| l.to_string() == t || (t == "xyz" && *l == LaneOrder::ROW_MAJOR) || (t == "yxz" && *l == LaneOrder::COLUMN_MAJOR))
            .ok_or_else(|| format!("unknown layout '{s}': row-major, column-major, quads, device, or an axis order like yzx (first axis fastest)"))
    }
}

/// Where one invocation runs.
///
/// ```
/// use lockstep::model::{LaneOrder, Placement, SubgroupSize, WorkgroupLayout, WorkgroupShape};
/// let w = WorkgroupLayout::new(WorkgroupShape::new(12, 1, 1).unwrap(),
///     SubgroupSize::new(8).unwrap(), LaneOrder::ROW_MAJOR).unwrap();
/// assert_eq!(w.placement(10), Placement { subgroup: 1, lane: 2 });
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Placement {
    /// `gl_SubgroupID`
    pub subgroup: u32,
    /// `gl_SubgroupInvocationID`
    pub lane: u32,
}

/// A workgroup placed into subgroups.
///
/// ```
/// use lockstep::model::{LaneMask, LaneOrder, SubgroupSize, WorkgroupLayout, WorkgroupShape};
/// let shape = WorkgroupShape::new(6, 2, 1).unwrap();
/// let w = WorkgroupLayout::new(shape, SubgroupSize::new(8).unwrap(), LaneOrder::COLUMN_MAJOR).unwrap();
/// assert_eq!(w.num_subgroups(), 2);
/// // Column-major: y fastest, so lane 1 of subgroup 0 holds (0,1).
/// assert_eq!(w.invocation(0, 1).map(|i| shape.local_id(i)), Some([0, 1, 0]));
/// assert_eq!(w.active(1), LaneMask(0x0f)); // 12 = 8 + 4: a partial last subgroup
/// assert_eq!(w.invocation(1, 4), None);
/// assert_eq!(w.placements().len(), 12);
/// assert_eq!((w.shape(), w.size().get(), w.layout()), (shape, 8, LaneOrder::COLUMN_MAJOR));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkgroupLayout {
    shape: WorkgroupShape,
    size: SubgroupSize,
    layout: LaneOrder,
    /// indexed by row-major local index
    placements: Vec<Placement>,
    /// per subgroup: the local index at each lane (u32::MAX for an empty lane)
    members: Vec<Vec<u32>>,
}

impl WorkgroupLayout {
    /// Places every invocation of `shape` into subgroups of `size` lanes in `layout` order.
    ///
    /// ```
    /// use lockstep::model::{LaneOrder, SubgroupSize, WorkgroupLayout, WorkgroupShape};
    /// let w = WorkgroupLayout::new(WorkgroupShape::new(3, 5, 7).unwrap(),
    ///     SubgroupSize::new(8).unwrap(), LaneOrder::ROW_MAJOR).unwrap();
    /// assert_eq!(w.num_subgroups(), 14); // ceil(105 / 8)
    /// assert_eq!(w.active(13).count(), 1); // 105 = 13*8 + 1: a partial last subgroup
    /// ```
    pub fn new(
        shape: WorkgroupShape,
        size: SubgroupSize,
        layout: LaneOrder,
    ) -> Result<Self, ModelError> {
        let n = shape.invocations();
        let order: Vec<u32> = match layout {
            LaneOrder::Linear(axes) => {
                let mut seen = [false; 3];
                for a in axes {
                    if a > 2 || std::mem::replace(&mut seen[a as usize], true) {
                        return Err(ModelError::InvalidLayout {
                            layout: format!("{axes:?}"),
                            shape: shape.to_string(),
                            why: "an axis order names each of x, y, z once",
                        });
                    }
                }
                let dims = [shape.x, shape.y, shape.z];
                let (d0, d1) = (dims[axes[0] as usize], dims[axes[1] as usize]);
                (0..n)
                    .map(|k| {
                        let mut id = [0u32; 3];
                        id[axes[0] as usize] = k % d0;
                        id[axes[1] as usize] = (k / d0) % d1;
                        id[axes[2] as usize] = k / (d0 * d1);
                        shape.index(id)
                    })
                    .collect()
            }
            LaneOrder::Quads => {
                if !shape.x.is_multiple_of(2) || !shape.y.is_multiple_of(2) {
                    return Err(ModelError::InvalidLayout {
                        layout: "quads".into(),
                        shape: shape.to_string(),
                        why: "2x2 quads need an even width and height",
                    });
                }
                let (qx, qy) = (shape.x / 2, shape.y / 2);
                (0..n)
                    .map(|k| {
                        let (q, w) = (k / 4, k % 4);
                        let (x, y, z) = (
                            (q % qx) * 2 + w % 2,
                            ((q / qx) % qy) * 2 + w / 2,
                            q / (qx * qy),
                        );
                        shape.index([x, y, z])
                    })
                    .collect()
            }
            LaneOrder::Device => return Err(ModelError::InvalidLayout {
                layout: "device".into(),
                shape: shape.to_string(),
                why:
                    "a device's layout is learnt from the device (WorkgroupLayout::from_placements)",
            }),
        };
        let s = size.get();
        let groups = n.div_ceil(s) as usize;
        let mut placements = vec![
            Placement {
                subgroup: 0,
                lane: 0
            };
            n as usize
        ];
        let mut members = vec![vec![u32::MAX; s as usize]; groups];
        for (k, &inv) in order.iter().enumerate() {
            let k = k as u32;
            placements[inv as usize] = Placement {
                subgroup: k / s,
                lane: k % s,
            };
            members[(k / s) as usize][(k % s) as usize] = inv;
        }
        Ok(WorkgroupLayout {
            shape,
            size,
            layout,
            placements,
            members,
        })
    }

    /// A layout as a device made it: `placements[i]` is where the invocation with row-major local
    /// index `i` ran. Subgroups may be partial anywhere (a device may run each row of a 3-wide
    /// workgroup as a subgroup of 3), but every subgroup number below the largest holds at least
    /// one invocation, and no two invocations share a lane.
    ///
    /// ```
    /// use lockstep::model::{LaneMask, LaneOrder, Placement, SubgroupSize, WorkgroupLayout, WorkgroupShape};
    /// let shape = WorkgroupShape::new(3, 2, 1).unwrap();
    /// // Each row of 3 its own subgroup.
    /// let p: Vec<Placement> = (0..6).map(|i| Placement { subgroup: i / 3, lane: i % 3 }).collect();
    /// let w = WorkgroupLayout::from_placements(shape, SubgroupSize::new(4).unwrap(), &p).unwrap();
    /// assert_eq!((w.num_subgroups(), w.active(1), w.layout()), (2, LaneMask(0b111), LaneOrder::Device));
    /// let twice = vec![Placement { subgroup: 0, lane: 0 }; 6];
    /// assert!(WorkgroupLayout::from_placements(shape, SubgroupSize::new(4).unwrap(), &twice).is_err());
    /// ```
    pub fn from_placements(
        shape: WorkgroupShape,
        size: SubgroupSize,
        placements: &[Placement],
    ) -> Result<Self, ModelError> {
        let bad = |why: &'static str| ModelError::InvalidLayout {
            layout: "device".into(),
            shape: shape.to_string(),
            why,
        };
        if placements.len() != shape.invocations() as usize {
            return Err(bad("one placement per invocation"));
        }
        let s = size.get();
        let groups = placements.iter().map(|p| p.subgroup + 1).max().unwrap_or(0) as usize;
        let mut members = vec![vec![u32::MAX; s as usize]; groups];
        for (i, p) in placements.iter().enumerate() {
            if p.lane >= s {
                return Err(bad("a lane at or past the subgroup size"));
            }
            let slot = &mut members[p.subgroup as usize][p.lane as usize];
            if *slot != u32::MAX {
                return Err(bad("two invocations in one lane"));
            }
            *slot = i as u32;
        }
        if members.iter().any(|m| m.iter().all(|&i| i == u32::MAX)) {
            return Err(bad("an empty subgroup between occupied ones"));
        }
        Ok(WorkgroupLayout {
            shape,
            size,
            layout: LaneOrder::Device,
            placements: placements.to_vec(),
            members,
        })
    }

    /// `gl_NumSubgroups`.
    pub fn num_subgroups(&self) -> u32 {
        self.members.len() as u32
    }

    /// Placement of the invocation with row-major local index `i`.
    pub fn placement(&self, i: u32) -> Placement {
        self.placements[i as usize]
    }

    /// Every placement, by row-major local index.
    pub fn placements(&self) -> &[Placement] {
        &self.placements
    }

    /// The row-major local index at (`subgroup`, `lane`), if that lane holds an invocation.
    pub fn invocation(&self, subgroup: u32, lane: u32) -> Option<u32> {
        self.members
            .get(subgroup as usize)
            .and_then(|m| m.get(lane as usize))
            .copied()
            .filter(|&i| i != u32::MAX)
    }

    /// Lanes of `subgroup` that hold an invocation (all but the tail of a partial last subgroup).
    pub fn active(&self, subgroup: u32) -> LaneMask {
        let mut m = LaneMask::EMPTY;
        if let Some(mem) = self.members.get(subgroup as usize) {
            for (l, &i) in mem.iter().enumerate() {
                if i != u32::MAX {
                    m = m.with(l as u32);
                }
            }
        }
        m
    }

    /// The shape.
    pub fn shape(&self) -> WorkgroupShape {
        self.shape
    }

    /// The subgroup size.
    pub fn size(&self) -> SubgroupSize {
        self.size
    }

    /// The layout.
    pub fn layout(&self) -> LaneOrder {
        self.layout
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(n: u64) -> SubgroupSize {
        SubgroupSize::new(n).unwrap()
    }

    #[test]
    fn every_invocation_is_placed_exactly_once_in_every_layout() {
        for shape in [(3, 5, 7), (8, 8, 1), (4, 2, 2), (1, 1, 1), (6, 4, 3)] {
            let shape = WorkgroupShape::new(shape.0, shape.1, shape.2).unwrap();
            for size in [1, 4, 8, 32, 128] {
                for l in LaneOrder::all() {
                    let Ok(w) = WorkgroupLayout::new(shape, s(size), l) else {
                        assert_eq!(l, LaneOrder::Quads);
                        continue;
                    };
                    let mut seen = std::collections::HashSet::new();
                    for i in 0..shape.invocations() {
                        let p = w.placement(i);
                        assert!(seen.insert(p));
                        assert_eq!(w.invocation(p.subgroup, p.lane), Some(i));
                    }
                    let total: u32 = (0..w.num_subgroups()).map(|g| w.active(g).count()).sum();
                    assert_eq!(total, shape.invocations());
                }
            }
        }
    }

    #[test]
    fn column_major_numbers_down_columns_first() {
        let shape = WorkgroupShape::new(4, 4, 1).unwrap();
        let w = WorkgroupLayout::new(shape, s(4), LaneOrder::COLUMN_MAJOR).unwrap();
        // Column x = 0 is subgroup 0.
        for y in 0..4 {
            assert_eq!(
                w.placement(shape.index([0, y, 0])),
                Placement {
                    subgroup: 0,
                    lane: y
                }
            );
        }
        assert_eq!(LaneOrder::distinct_for(shape, s(4)).len(), 3);
    }

    #[test]
    fn quads_follow_the_glsl_quad_diagram() {
        // GL_KHR_shader_subgroup: quad index 0 (x,y), 1 (x+1,y), 2 (x,y+1), 3 (x+1,y+1).
        let shape = WorkgroupShape::new(4, 2, 1).unwrap();
        let w = WorkgroupLayout::new(shape, s(8), LaneOrder::Quads).unwrap();
        assert_eq!(w.placement(shape.index([1, 0, 0])).lane, 1);
        assert_eq!(w.placement(shape.index([0, 1, 0])).lane, 2);
        assert_eq!(w.placement(shape.index([3, 1, 0])).lane, 7);
        assert!(WorkgroupLayout::new(
            WorkgroupShape::new(3, 2, 1).unwrap(),
            s(8),
            LaneOrder::Quads
        )
        .is_err());
    }
}
