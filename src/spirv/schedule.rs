//! The orders in which an ordered run takes the workgroups (`--schedules`: other orders a device
//! may take, explored like the ways of a branch in `explore.rs`).

/// The workgroup run `i`-th of `count` under schedule `k`: schedule 0 is the dispatch's own order;
/// another is a permutation of `0..count` — an affine map modulo the next power of two (odd
/// multiplier, so a bijection there), cycle-walked back into range, seeded by `k`.
pub(crate) fn schedule_order(k: u64, i: u64, count: u64) -> u64 {
    if k == 0 {
        return i;
    }
    let n = count.next_power_of_two().max(2);
    let a = (0x9e37_79b9_7f4a_7c15u64.wrapping_mul(k) | 1) & (n - 1);
    let c = k.wrapping_mul(0x632b_e59b_d9b4_e019) & (n - 1);
    let mut x = i;
    loop {
        x = (x.wrapping_mul(a).wrapping_add(c)) & (n - 1);
        if x < count {
            return x;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::schedule_order;

    // `--schedules` runs the workgroups again in other orders (docs/interpreter.md): each order
    // must run every workgroup of the dispatch once — a permutation of 0..count — or a workgroup
    // would run twice and another never, and its writes would be missing from the run. Counts
    // of one, powers of two and others; schedule 0 is the dispatch's own order.
    #[test]
    fn every_schedule_runs_every_workgroup_once() {
        for count in [1u64, 2, 3, 5, 8, 13, 64, 100, 1000] {
            assert!((0..count).all(|i| schedule_order(0, i, count) == i));
            for k in 1..=6u64 {
                let mut seen = vec![false; count as usize];
                for i in 0..count {
                    let x = schedule_order(k, i, count);
                    assert!(x < count, "schedule {k}: {x} of {count}");
                    assert!(!seen[x as usize], "schedule {k}: {x} twice of {count}");
                    seen[x as usize] = true;
                }
            }
            // and another order than the dispatch's, where there is one to take
            if count > 2 {
                assert!((1..=6u64).any(|k| (0..count).any(|i| schedule_order(k, i, count) != i)));
            }
        }
    }
}
