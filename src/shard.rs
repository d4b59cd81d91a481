//! `--shard K/N`: one of N disjoint parts of a run, so that N machines (or CI jobs) share it.
//!
//! Every sharded command splits the same way: the run's units (conform's jobs, Amber's files,
//! a reconvergence campaign's batches) in their usual order, and shard K keeps every N-th from the
//! K-th. A unit's work never depends on which other units run, so the N shards together are
//! exactly the unsharded run (`tests/shard.rs` checks that for conform, amber and reconverge).

use std::fmt;
use std::str::FromStr;

/// Shard `k` (1-based) of `n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// which shard, 1..=n
    pub k: u32,
    /// how many shards
    pub n: u32,
}

impl Shard {
    /// Whether the unit at `index` (0-based, in the run's order) belongs to this shard.
    pub fn keeps(self, index: u64) -> bool {
        index % self.n as u64 == (self.k - 1) as u64
    }

    /// Keeps only this shard's units of `items` (in order); `None` keeps all.
    pub fn retain<T>(shard: Option<Shard>, items: &mut Vec<T>) {
        if let Some(s) = shard {
            let mut i = 0u64;
            items.retain(|_| {
                i += 1;
                s.keeps(i - 1)
            });
        }
    }
}

impl FromStr for Shard {
    type Err = String;

    /// `K/N` with 1 <= K <= N.
    ///
    /// ```
    /// use lockstep::shard::Shard;
    /// assert_eq!("2/5".parse::<Shard>().unwrap(), Shard { k: 2, n: 5 });
    /// assert!("0/5".parse::<Shard>().is_err() && "6/5".parse::<Shard>().is_err());
    /// assert!("2".parse::<Shard>().is_err() && "a/b".parse::<Shard>().is_err());
    /// ```
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("--shard {s}: give K/N with 1 <= K <= N (shard K of N, e.g. 2/4)");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let k: u32 = k.trim().parse().map_err(|_| bad())?;
        let n: u32 = n.trim().parse().map_err(|_| bad())?;
        if k == 0 || n == 0 || k > n {
            return Err(bad());
        }
        Ok(Shard { k, n })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.k, self.n)
    }
}
