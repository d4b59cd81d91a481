//! A validated operation call: the op, the subgroup size and its arguments.

use crate::model::catalogue::{ArgKind, Op, OpInfo};
use crate::model::error::ModelError;
use crate::model::params::{Ballot, ClusterSize, QuadIndex, SubgroupSize};

/// A `uint` argument that is either one value for the whole subgroup or one value per lane.
///
/// ```
/// use lockstep::model::LaneArg;
/// let d = LaneArg::parse("3").unwrap();
/// assert_eq!((d.at(0), d.at(7)), (3, 3));
/// let ids = LaneArg::parse("3,2,1,0x0").unwrap();
/// assert_eq!(ids, LaneArg::PerLane(vec![3, 2, 1, 0]));
/// assert_eq!(ids.at(1), 2);
/// assert_eq!(ids.to_string(), "3,2,1,0");
/// assert!(LaneArg::parse("-1").unwrap_err().contains("not a uint"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum LaneArg {
    /// The same value in every lane (dynamically uniform).
    Uniform(u32),
    /// One value per lane (length = subgroup size).
    PerLane(Vec<u32>),
}

impl LaneArg {
    /// The value seen by `lane`.
    #[inline(always)]
    pub fn at(&self, lane: u32) -> u32 {
        match self {
            LaneArg::Uniform(v) => *v,
            LaneArg::PerLane(v) => v[lane as usize],
        }
    }

    /// Parses `3` (uniform) or `3,1,0,…` (per lane).
    pub fn parse(text: &str) -> Result<LaneArg, String> {
        let parts: Result<Vec<u32>, String> = text
            .split(',')
            .map(|p| {
                let p = p.trim();
                let r = match p.strip_prefix("0x") {
                    Some(h) => u32::from_str_radix(h, 16),
                    None => p.parse::<u32>(),
                };
                r.map_err(|_| format!("'{p}' is not a uint (0..=4294967295)"))
            })
            .collect();
        let v = parts?;
        Ok(if v.len() == 1 {
            LaneArg::Uniform(v[0])
        } else {
            LaneArg::PerLane(v)
        })
    }
}

impl std::fmt::Display for LaneArg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LaneArg::Uniform(v) => write!(f, "{v}"),
            LaneArg::PerLane(v) => {
                let s: Vec<String> = v.iter().map(|x| x.to_string()).collect();
                f.write_str(&s.join(","))
            }
        }
    }
}

/// Arguments as a caller gives them, before validation. Only those the op takes may be set.
///
/// ```
/// use lockstep::model::{lookup, Args, LaneArg, OpCall, SubgroupSize};
/// let args = Args { delta: Some(LaneArg::Uniform(1)), cluster: Some(4), ..Args::default() };
/// let call = OpCall::new(lookup("clustered_rotate").unwrap(), SubgroupSize::new(8).unwrap(), args.clone()).unwrap();
/// assert_eq!(call.args(), args);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Args {
    /// `id` of broadcast, shuffle, quad_broadcast
    pub id: Option<LaneArg>,
    /// `mask` of shuffle_xor
    pub mask: Option<LaneArg>,
    /// `delta` of shuffle_up, shuffle_down, rotate, clustered_rotate
    pub delta: Option<LaneArg>,
    /// `index` of ballot_bit_extract
    pub index: Option<LaneArg>,
    /// `cluster` of the clustered ops and clustered_rotate
    pub cluster: Option<u64>,
    /// the uniform `uvec4` of the ballot bit operations
    pub ballot: Option<Ballot>,
}

/// An operation with a subgroup size and checked arguments — ready to evaluate.
///
/// ```
/// use lockstep::model::{lookup, Args, LaneArg, OpCall, Op, SubgroupSize};
/// let size = SubgroupSize::new(16).unwrap();
/// let call = OpCall::new(lookup("subgroupQuadBroadcast").unwrap(), size,
///     Args { id: Some(LaneArg::Uniform(2)), ..Args::default() }).unwrap();
/// assert_eq!(call.op(), Op::QuadBroadcast);
/// assert_eq!(call.size(), size);
/// assert_eq!(call.quad_index().get(), 2);
/// assert_eq!(call.cluster().get(), 1); // takes no cluster
/// assert_eq!(call.info().name, "quad_broadcast");
/// let elect = OpCall::plain(Op::Elect, size).unwrap();
/// assert_eq!(elect.lane_arg(), &LaneArg::Uniform(0));
/// assert_eq!(elect.ballot().0, 0);
/// ```
#[derive(Clone, Debug)]
pub struct OpCall {
    info: &'static OpInfo,
    size: SubgroupSize,
    lane_arg: LaneArg,
    cluster: ClusterSize,
    quad: QuadIndex,
    ballot: Ballot,
}

impl OpCall {
    /// Checks `args` against what `info` takes: every needed argument present, none extra, per-lane
    /// lists of length `size`, uniform where the spec requires it, cluster and quad index in range.
    ///
    /// ```
    /// use lockstep::model::{lookup, Args, LaneArg, OpCall, SubgroupSize};
    /// let s = SubgroupSize::new(8).unwrap();
    /// let args = Args { delta: Some(LaneArg::Uniform(1)), ..Args::default() };
    /// assert!(OpCall::new(lookup("shuffle_down").unwrap(), s, args).is_ok());
    /// let e = OpCall::new(lookup("shuffle_down").unwrap(), s, Args::default()).unwrap_err();
    /// assert!(e.to_string().contains("needs the argument 'delta'"));
    /// ```
    pub fn new(
        info: &'static OpInfo,
        size: SubgroupSize,
        args: Args,
    ) -> Result<OpCall, ModelError> {
        if info.is_workgroup_level() {
            return Err(ModelError::MissingArgument {
                op: leak(&info.name),
                arg: "workgroup",
                what: "a workgroup built-in: evaluate it with model::workgroup (CLI: --workgroup X,Y,Z)",
            });
        }
        let op = leak(&info.name);
        let given: [(&'static str, bool); 6] = [
            ("id", args.id.is_some()),
            ("mask", args.mask.is_some()),
            ("delta", args.delta.is_some()),
            ("index", args.index.is_some()),
            ("cluster", args.cluster.is_some()),
            ("ballot", args.ballot.is_some()),
        ];
        for (name, present) in given {
            if present && info.arg(name).is_none() {
                return Err(ModelError::UnexpectedArgument { op, arg: name });
            }
        }
        let mut call = OpCall {
            info,
            size,
            lane_arg: LaneArg::Uniform(0),
            cluster: ClusterSize::new(1, size)?,
            quad: QuadIndex::new(0)?,
            ballot: Ballot(0),
        };
        for &kind in info.args {
            let missing = || ModelError::MissingArgument {
                op,
                arg: kind.name(),
                what: kind.describe(),
            };
            match kind {
                ArgKind::Id { .. } | ArgKind::Mask | ArgKind::Delta { .. } | ArgKind::Index => {
                    let a = match kind {
                        ArgKind::Id { .. } => &args.id,
                        ArgKind::Mask => &args.mask,
                        ArgKind::Delta { .. } => &args.delta,
                        _ => &args.index,
                    }
                    .clone()
                    .ok_or_else(missing)?;
                    if let LaneArg::PerLane(v) = &a {
                        if kind.uniform() {
                            return Err(ModelError::NotUniform {
                                op,
                                arg: kind.name(),
                            });
                        }
                        if v.len() != size.lanes() {
                            return Err(ModelError::WrongLaneCount {
                                what: kind.name(),
                                size: size.get(),
                                got: v.len(),
                            });
                        }
                    }
                    call.lane_arg = a;
                }
                ArgKind::QuadIndex => match args.id.clone().ok_or_else(missing)? {
                    LaneArg::Uniform(i) => call.quad = QuadIndex::new(i as u64)?,
                    LaneArg::PerLane(_) => {
                        return Err(ModelError::NotUniform { op, arg: "id" });
                    }
                },
                ArgKind::Cluster => {
                    call.cluster = ClusterSize::new(args.cluster.ok_or_else(missing)?, size)?
                }
                ArgKind::Ballot => call.ballot = args.ballot.ok_or_else(missing)?,
                ArgKind::Workgroup => {}
            }
        }
        Ok(call)
    }

    /// A call of an op that takes no arguments.
    pub fn plain(op: Op, size: SubgroupSize) -> Result<OpCall, ModelError> {
        OpCall::new(crate::model::info(op), size, Args::default())
    }

    /// The catalogue entry.
    pub fn info(&self) -> &'static OpInfo {
        self.info
    }

    /// The operation.
    pub fn op(&self) -> Op {
        self.info.op
    }

    /// The subgroup size.
    pub fn size(&self) -> SubgroupSize {
        self.size
    }

    /// The id / mask / delta / index argument (uniform 0 if the op takes none).
    pub fn lane_arg(&self) -> &LaneArg {
        &self.lane_arg
    }

    /// The cluster size (1 if the op takes none).
    pub fn cluster(&self) -> ClusterSize {
        self.cluster
    }

    /// The quad index (0 if the op takes none).
    pub fn quad_index(&self) -> QuadIndex {
        self.quad
    }

    /// The ballot operand (0 if the op takes none).
    pub fn ballot(&self) -> Ballot {
        self.ballot
    }

    /// The arguments back in caller form (for printing a case as a command line).
    pub fn args(&self) -> Args {
        let mut a = Args::default();
        for &k in self.info.args {
            match k {
                ArgKind::Id { .. } => a.id = Some(self.lane_arg.clone()),
                ArgKind::Mask => a.mask = Some(self.lane_arg.clone()),
                ArgKind::Delta { .. } => a.delta = Some(self.lane_arg.clone()),
                ArgKind::Index => a.index = Some(self.lane_arg.clone()),
                ArgKind::QuadIndex => a.id = Some(LaneArg::Uniform(self.quad.get())),
                ArgKind::Cluster => a.cluster = Some(self.cluster.get() as u64),
                ArgKind::Ballot => a.ballot = Some(self.ballot),
                ArgKind::Workgroup => {}
            }
        }
        a
    }
}

// Catalogue names live for the whole program (the catalogue is a static); this turns the borrowed
// name into the &'static str the error type holds without copying it.
fn leak(s: &'static str) -> &'static str {
    s
}
