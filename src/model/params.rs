//! Validated parameters: subgroup size, lane masks, ballots, cluster sizes and quad indices.
//!
//! Each is checked once, at construction, against the rule in the spec texts, so an invalid value
//! cannot reach the evaluator.

use crate::model::error::ModelError;
use crate::model::types::ValueType;
use crate::model::value::Value;
use std::fmt;

/// The number of invocations in a subgroup: a power of two in 1..=128 (GL_KHR_shader_subgroup, 7.1).
///
/// ```
/// use lockstep::model::SubgroupSize;
/// let s = SubgroupSize::new(32).unwrap();
/// assert_eq!((s.get(), s.lanes()), (32, 32usize));
/// assert_eq!(s.full_mask().0, 0xffff_ffff);
/// assert_eq!(SubgroupSize::ALL.map(|s| s.get()), [1, 2, 4, 8, 16, 32, 64, 128]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SubgroupSize(u32);

impl SubgroupSize {
    /// Every valid size: 1, 2, 4, …, 128.
    pub const ALL: [SubgroupSize; 8] = [
        SubgroupSize(1),
        SubgroupSize(2),
        SubgroupSize(4),
        SubgroupSize(8),
        SubgroupSize(16),
        SubgroupSize(32),
        SubgroupSize(64),
        SubgroupSize(128),
    ];

    /// Validates `n`.
    ///
    /// ```
    /// use lockstep::model::SubgroupSize;
    /// assert_eq!(SubgroupSize::new(32).unwrap().get(), 32);
    /// let e = SubgroupSize::new(24).unwrap_err().to_string();
    /// assert!(e.contains("power of two"));
    /// assert!(SubgroupSize::new(256).is_err());
    /// ```
    pub fn new(n: u64) -> Result<Self, ModelError> {
        if n == 0 || n > 128 || !n.is_power_of_two() {
            return Err(ModelError::InvalidSubgroupSize(n));
        }
        Ok(SubgroupSize(n as u32))
    }

    /// The size.
    #[inline(always)]
    pub fn get(self) -> u32 {
        self.0
    }

    /// As a usize, for indexing.
    #[inline(always)]
    pub fn lanes(self) -> usize {
        self.0 as usize
    }

    /// The mask of every lane of the subgroup.
    #[inline(always)]
    pub fn full_mask(self) -> LaneMask {
        LaneMask::first(self.0)
    }
}

impl fmt::Display for SubgroupSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A set of lanes as 128 bits, lane i = bit i.
///
/// ```
/// use lockstep::model::LaneMask;
/// let m = LaneMask(0b1101_0110); // lanes 1, 2, 4, 6, 7
/// assert!(m.has(1) && !m.has(0));
/// assert_eq!(m.iter().collect::<Vec<_>>(), [1, 2, 4, 6, 7]);
/// assert_eq!((m.lowest(), m.highest(), m.count()), (Some(1), Some(7), 5));
/// assert_eq!(m.with(0).0, 0b1101_0111);
/// assert_eq!(m.and(LaneMask::first(4)), LaneMask(0b0110));
/// assert_eq!(m.minus(LaneMask::first(4)), LaneMask(0b1101_0000));
/// assert_eq!(m.or(LaneMask(1)), m.with(0));
/// assert!(LaneMask::EMPTY.is_empty() && LaneMask::EMPTY.lowest().is_none());
/// assert_eq!(m.to_string(), "0xd6");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct LaneMask(pub u128);

impl LaneMask {
    /// No lane.
    pub const EMPTY: LaneMask = LaneMask(0);

    /// Lanes 0..n.
    #[inline(always)]
    pub fn first(n: u32) -> LaneMask {
        if n >= 128 {
            LaneMask(!0)
        } else {
            LaneMask((1u128 << n) - 1)
        }
    }

    /// A mask checked against a subgroup size: bits at or above the size are an error.
    ///
    /// ```
    /// use lockstep::model::{LaneMask, SubgroupSize};
    /// let s = SubgroupSize::new(8).unwrap();
    /// assert!(LaneMask::within(0xff, s).is_ok());
    /// assert!(LaneMask::within(0x100, s).unwrap_err().to_string().contains("at or above"));
    /// ```
    pub fn within(bits: u128, size: SubgroupSize) -> Result<LaneMask, ModelError> {
        if bits & !size.full_mask().0 != 0 {
            return Err(ModelError::MaskBeyondSize {
                mask: bits,
                size: size.get(),
            });
        }
        Ok(LaneMask(bits))
    }

    /// Parses a hex mask (`0xff`, `ff`), checked against `size`.
    pub fn parse(text: &str, size: SubgroupSize) -> Result<LaneMask, ModelError> {
        let h = text
            .trim()
            .trim_start_matches("0x")
            .trim_start_matches("0X")
            .replace('_', "");
        let bits = u128::from_str_radix(&h, 16).map_err(|_| ModelError::BadValue {
            text: text.to_string(),
            ty: ValueType::UVEC4,
            why: "an active mask is one hex number of at most 128 bits (lane i = bit i)"
                .to_string(),
        })?;
        LaneMask::within(bits, size)
    }

    /// Is lane `lane` in the set?
    #[inline(always)]
    pub fn has(self, lane: u32) -> bool {
        // In the 64-lane half that holds it: a `u128` shifted by a variable takes several
        // instructions, a `u64` one.
        let half = if lane < 64 {
            self.0 as u64
        } else {
            (self.0 >> 64) as u64
        };
        lane < 128 && (half >> (lane & 63)) & 1 != 0
    }

    /// With lane `lane` added.
    #[inline(always)]
    pub fn with(self, lane: u32) -> LaneMask {
        LaneMask(self.0 | (1u128 << lane))
    }

    /// The lowest lane, if any.
    #[inline(always)]
    pub fn lowest(self) -> Option<u32> {
        (self.0 != 0).then(|| self.0.trailing_zeros())
    }

    /// The highest lane, if any.
    #[inline(always)]
    pub fn highest(self) -> Option<u32> {
        (self.0 != 0).then(|| 127 - self.0.leading_zeros())
    }

    /// Number of lanes.
    #[inline(always)]
    pub fn count(self) -> u32 {
        self.0.count_ones()
    }

    /// Is the set empty?
    #[inline(always)]
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Lanes in increasing order.
    pub fn iter(self) -> impl Iterator<Item = u32> {
        // The two 64-lane halves in turn: a `u128`'s count and clear take several instructions
        // each, a `u64`'s one.
        let (mut lo, mut hi) = (self.0 as u64, (self.0 >> 64) as u64);
        std::iter::from_fn(move || {
            if lo != 0 {
                let l = lo.trailing_zeros();
                lo &= lo - 1;
                Some(l)
            } else if hi != 0 {
                let l = hi.trailing_zeros();
                hi &= hi - 1;
                Some(64 + l)
            } else {
                None
            }
        })
    }

    /// Set intersection.
    #[inline(always)]
    pub fn and(self, o: LaneMask) -> LaneMask {
        LaneMask(self.0 & o.0)
    }

    /// Set difference.
    #[inline(always)]
    pub fn minus(self, o: LaneMask) -> LaneMask {
        LaneMask(self.0 & !o.0)
    }

    /// Set union.
    #[inline(always)]
    pub fn or(self, o: LaneMask) -> LaneMask {
        LaneMask(self.0 | o.0)
    }
}

impl fmt::Display for LaneMask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "0x{:x}", self.0)
    }
}

/// A ballot as the `uvec4` of GL_KHR_shader_subgroup: lane i is bit i%32 of component i/32.
///
/// ```
/// use lockstep::model::Ballot;
/// // Lane 33 is bit 1 of component 1.
/// let b = Ballot(1 << 33);
/// assert_eq!(b.words(), [0, 2, 0, 0]);
/// assert!(b.bit(33) && !b.bit(32));
/// assert_eq!(b.to_string(), "(0x0,0x2,0x0,0x0)");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Ballot(pub u128);

impl Ballot {
    /// From the four `uvec4` words.
    ///
    /// ```
    /// use lockstep::model::Ballot;
    /// let b = Ballot::from_words([1, 0, 0, 0x8000_0000]);
    /// assert!(b.bit(0) && b.bit(127) && !b.bit(1));
    /// assert_eq!(b.words(), [1, 0, 0, 0x8000_0000]);
    /// ```
    #[inline(always)]
    pub fn from_words(w: [u32; 4]) -> Ballot {
        Ballot(w[0] as u128 | (w[1] as u128) << 32 | (w[2] as u128) << 64 | (w[3] as u128) << 96)
    }

    /// The four `uvec4` words.
    #[inline(always)]
    pub fn words(self) -> [u32; 4] {
        [
            self.0 as u32,
            (self.0 >> 32) as u32,
            (self.0 >> 64) as u32,
            (self.0 >> 96) as u32,
        ]
    }

    /// Bit `i` (false for i ≥ 128).
    #[inline(always)]
    pub fn bit(self, i: u32) -> bool {
        i < 128 && (self.0 >> i) & 1 != 0
    }

    /// Parses one hex number of up to 128 bits.
    ///
    /// ```
    /// use lockstep::model::Ballot;
    /// assert_eq!(Ballot::parse("0x1_0000_0001").unwrap().words(), [1, 1, 0, 0]);
    /// assert!(Ballot::parse("0x1ffffffffffffffffffffffffffffffff").is_err());
    /// ```
    pub fn parse(text: &str) -> Result<Ballot, ModelError> {
        let h = text
            .trim()
            .trim_start_matches("0x")
            .trim_start_matches("0X")
            .replace('_', "");
        u128::from_str_radix(&h, 16)
            .map(Ballot)
            .map_err(|_| ModelError::BadBallot(text.to_string()))
    }
}

impl Value {
    /// A `uvec4` ballot.
    ///
    /// ```
    /// use lockstep::model::{Ballot, Value};
    /// assert_eq!(Value::ballot(Ballot(1 << 33)).bits(), [0, 2, 0, 0]);
    /// ```
    pub fn ballot(b: Ballot) -> Value {
        Value::of(b.words())
    }
}

impl fmt::Display for Ballot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let w = self.words();
        write!(f, "(0x{:x},0x{:x},0x{:x},0x{:x})", w[0], w[1], w[2], w[3])
    }
}

/// The cluster size of a clustered reduction or clustered rotate: a power of two, ≥ 1, ≤ subgroup size.
///
/// ```
/// use lockstep::model::{ClusterSize, SubgroupSize};
/// assert_eq!(ClusterSize::new(4, SubgroupSize::new(32).unwrap()).unwrap().get(), 4);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ClusterSize(u32);

impl ClusterSize {
    /// Validates `n` for a subgroup of `size` lanes. A cluster larger than the subgroup is undefined
    /// behaviour (GL_KHR_shader_subgroup rev. 4; SPV_KHR_subgroup_rotate), so it is rejected.
    ///
    /// ```
    /// use lockstep::model::{ClusterSize, SubgroupSize};
    /// let s = SubgroupSize::new(8).unwrap();
    /// assert!(ClusterSize::new(4, s).is_ok());
    /// assert!(ClusterSize::new(16, s).unwrap_err().to_string().contains("at most the subgroup size"));
    /// assert!(ClusterSize::new(3, s).is_err());
    /// ```
    pub fn new(n: u64, size: SubgroupSize) -> Result<Self, ModelError> {
        if n == 0 || !n.is_power_of_two() || n > size.get() as u64 {
            return Err(ModelError::InvalidClusterSize {
                cluster: n,
                size: size.get(),
            });
        }
        Ok(ClusterSize(n as u32))
    }

    /// The size.
    #[inline(always)]
    pub fn get(self) -> u32 {
        self.0
    }
}

/// The quad index of subgroupQuadBroadcast: 0..=3.
///
/// ```
/// use lockstep::model::QuadIndex;
/// assert_eq!(QuadIndex::new(2).unwrap().get(), 2);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct QuadIndex(u32);

impl QuadIndex {
    /// Validates `n`.
    ///
    /// ```
    /// use lockstep::model::QuadIndex;
    /// assert!(QuadIndex::new(3).is_ok());
    /// assert!(QuadIndex::new(4).is_err());
    /// ```
    pub fn new(n: u64) -> Result<Self, ModelError> {
        if n >= 4 {
            return Err(ModelError::InvalidQuadIndex(n));
        }
        Ok(QuadIndex(n as u32))
    }

    /// The index.
    #[inline(always)]
    pub fn get(self) -> u32 {
        self.0
    }
}
