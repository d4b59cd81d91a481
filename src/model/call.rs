//! A validated operation call: the op, the subgroup size and its arguments.

use crate::model::catalogue::{info, ArgKind, Op, OpInfo};
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

/// Where the arguments of a call come from, by what a kind of argument needs: one value for the
/// whole subgroup, one per lane, a cluster size, a ballot. [`Args::from_sources`] picks, for each
/// argument an op takes, the source its [`ArgKind`] calls for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArgSources {
    /// The value of a dynamically uniform id or delta, and of the constant quad index.
    pub uniform: u32,
    /// The value(s) of an id, mask, delta or index that may differ per lane.
    pub per_lane: LaneArg,
    /// The constant cluster size.
    pub cluster: u64,
    /// The uniform ballot operand.
    pub ballot: Ballot,
}

impl Args {
    /// The arguments `info` takes, each from the source its kind calls for (uniform kinds from
    /// `uniform`, per-lane kinds from `per_lane`, …); the kinds it does not take stay `None`.
    ///
    /// ```
    /// use lockstep::model::{lookup, ArgSources, Args, Ballot, LaneArg};
    /// let src = ArgSources { uniform: 2, per_lane: LaneArg::PerLane(vec![1, 0]), cluster: 4, ballot: Ballot(5) };
    /// let rotate = Args::from_sources(lookup("clustered_rotate").unwrap(), &src);
    /// assert_eq!((rotate.delta, rotate.cluster), (Some(LaneArg::Uniform(2)), Some(4)));
    /// let shuffle = Args::from_sources(lookup("shuffle").unwrap(), &src);
    /// assert_eq!(shuffle.id, Some(LaneArg::PerLane(vec![1, 0])));
    /// assert_eq!(Args::from_sources(lookup("quad_broadcast").unwrap(), &src).id, Some(LaneArg::Uniform(2)));
    /// ```
    pub fn from_sources(info: &OpInfo, src: &ArgSources) -> Args {
        let mut a = Args::default();
        for &kind in info.args {
            let lane = || {
                if kind.uniform() {
                    LaneArg::Uniform(src.uniform)
                } else {
                    src.per_lane.clone()
                }
            };
            match kind {
                ArgKind::Id { .. } | ArgKind::QuadIndex => a.id = Some(lane()),
                ArgKind::Mask => a.mask = Some(lane()),
                ArgKind::Delta { .. } => a.delta = Some(lane()),
                ArgKind::Index => a.index = Some(lane()),
                ArgKind::Cluster => a.cluster = Some(src.cluster),
                ArgKind::Ballot => a.ballot = Some(src.ballot),
                ArgKind::Workgroup => {}
            }
        }
        a
    }

    /// Is an argument of `kind` given? (The id of a broadcast and the index of a quad broadcast
    /// share the `id` field; a workgroup is never given here.)
    pub fn has(&self, kind: ArgKind) -> bool {
        match kind {
            ArgKind::Id { .. } | ArgKind::QuadIndex => self.id.is_some(),
            ArgKind::Mask => self.mask.is_some(),
            ArgKind::Delta { .. } => self.delta.is_some(),
            ArgKind::Index => self.index.is_some(),
            ArgKind::Cluster => self.cluster.is_some(),
            ArgKind::Ballot => self.ballot.is_some(),
            ArgKind::Workgroup => false,
        }
    }

    /// The given value of a lane argument kind (id, quad index, mask, delta, index).
    fn lane(&self, kind: ArgKind) -> Option<&LaneArg> {
        match kind {
            ArgKind::Id { .. } | ArgKind::QuadIndex => self.id.as_ref(),
            ArgKind::Mask => self.mask.as_ref(),
            ArgKind::Delta { .. } => self.delta.as_ref(),
            ArgKind::Index => self.index.as_ref(),
            ArgKind::Cluster | ArgKind::Ballot | ArgKind::Workgroup => None,
        }
    }
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
        let op = info.name.as_str();
        if info.is_workgroup_level() {
            return Err(ModelError::MissingArgument {
                op,
                arg: "workgroup",
                what: "a workgroup built-in: evaluate it with model::workgroup (CLI: --workgroup X,Y,Z)",
            });
        }
        for kind in ArgKind::ALL {
            if args.has(kind) && info.arg(kind.name()).is_none() {
                return Err(ModelError::UnexpectedArgument {
                    op,
                    arg: kind.name(),
                });
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
                ArgKind::Id { .. }
                | ArgKind::Mask
                | ArgKind::Delta { .. }
                | ArgKind::Index
                | ArgKind::QuadIndex => {
                    let a = args.lane(kind).ok_or_else(missing)?;
                    call.set_lane(kind, a.clone())?;
                }
                ArgKind::Cluster => {
                    call.cluster = ClusterSize::new(args.cluster.ok_or_else(missing)?, size)?
                }
                ArgKind::Ballot => call.ballot = args.ballot.ok_or_else(missing)?,
                ArgKind::Workgroup => {}
            }
        }
        Ok(call)
    }

    /// Replaces the id / mask / delta / index argument (or the quad index) with the checks of
    /// [`OpCall::new`]: uniform where the op requires it, one value per lane. When the call and
    /// `arg` are both per lane, the call keeps its own list and copies `arg` into it, so evaluating
    /// one call on many subgroups does not reallocate.
    ///
    /// ```
    /// use lockstep::model::{lookup, Args, LaneArg, ModelError, OpCall, SubgroupSize};
    /// let s = SubgroupSize::new(4).unwrap();
    /// let mut call = OpCall::new(lookup("shuffle").unwrap(), s,
    ///     Args { id: Some(LaneArg::PerLane(vec![3, 2, 1, 0])), ..Args::default() }).unwrap();
    /// call.set_lane_arg(LaneArg::PerLane(vec![1, 1, 1, 1])).unwrap();
    /// assert_eq!(call.lane_arg(), &LaneArg::PerLane(vec![1, 1, 1, 1]));
    /// assert!(matches!(call.set_lane_arg(LaneArg::PerLane(vec![0; 8])),
    ///     Err(ModelError::WrongLaneCount { got: 8, .. })));
    /// let mut bcast = OpCall::new(lookup("broadcast").unwrap(), s,
    ///     Args { id: Some(LaneArg::Uniform(0)), ..Args::default() }).unwrap();
    /// assert!(matches!(bcast.set_lane_arg(LaneArg::PerLane(vec![0; 4])), Err(ModelError::NotUniform { .. })));
    /// let mut elect = OpCall::plain(lockstep::model::Op::Elect, s).unwrap();
    /// assert!(matches!(elect.set_lane_arg(LaneArg::Uniform(1)), Err(ModelError::UnexpectedArgument { .. })));
    /// ```
    pub fn set_lane_arg(&mut self, arg: LaneArg) -> Result<(), ModelError> {
        let kind = self
            .info
            .args
            .iter()
            .copied()
            .find(|k| k.is_lane_arg())
            .ok_or(ModelError::UnexpectedArgument {
                op: self.info.name.as_str(),
                arg: "id/mask/delta/index",
            })?;
        self.set_lane(kind, arg)
    }

    /// Checks and stores the lane argument of `kind` (see [`OpCall::set_lane_arg`]).
    fn set_lane(&mut self, kind: ArgKind, arg: LaneArg) -> Result<(), ModelError> {
        let op = self.info.name.as_str();
        if let LaneArg::PerLane(v) = &arg {
            if kind.uniform() {
                return Err(ModelError::NotUniform {
                    op,
                    arg: kind.name(),
                });
            }
            if v.len() != self.size.lanes() {
                return Err(ModelError::WrongLaneCount {
                    what: kind.name(),
                    size: self.size.get(),
                    got: v.len(),
                });
            }
        }
        match (kind, arg) {
            (ArgKind::QuadIndex, LaneArg::Uniform(i)) => self.quad = QuadIndex::new(i as u64)?,
            (_, LaneArg::PerLane(new)) if matches!(self.lane_arg, LaneArg::PerLane(_)) => {
                if let LaneArg::PerLane(old) = &mut self.lane_arg {
                    old.copy_from_slice(&new);
                }
            }
            (_, arg) => self.lane_arg = arg,
        }
        Ok(())
    }

    /// A call of an op that takes no arguments.
    pub fn plain(op: Op, size: SubgroupSize) -> Result<OpCall, ModelError> {
        OpCall::new(info(op), size, Args::default())
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
