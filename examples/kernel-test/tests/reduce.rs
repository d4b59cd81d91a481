//! The reduction kernel checked with lockstep at every subgroup size a device may have: the sum
//! is defined and right; without its barrier, the model finds the race a device would only
//! sometimes show.

use lockstep::{compile, HostBuffer, JobBuffer, KernelJob, SourceLang, SourceOptions};

fn job(defines: &[(&str, &str)]) -> KernelJob {
    let mut opts = SourceOptions::default();
    for (k, v) in defines {
        opts.defines.push((k.to_string(), Some(v.to_string())));
    }
    let module = compile(kernel_test::REDUCE, SourceLang::Glsl, &opts).expect("compiles");
    let mut job = KernelJob::new(module);
    job.workgroups = [2, 1, 1];
    let data: Vec<u32> = (0..128).collect();
    job.buffers
        .push(JobBuffer::new(0, 0, HostBuffer::from_slice(&data)));
    job.buffers
        .push(JobBuffer::new(0, 1, HostBuffer::from_slice(&[0u32; 2])));
    job
}

#[test]
fn the_sum_is_right_at_every_subgroup_size() {
    let job = job(&[]);
    for size in [1, 4, 8, 16, 32, 64] {
        let report = job.check(size).expect("runs");
        assert!(report.ok(), "size {size}:\n{}", report.text());
    }
    let model = job
        .run_model(lockstep::SubgroupSize::new(32).unwrap(), None)
        .unwrap();
    let out = &model
        .run
        .buffers
        .iter()
        .find(|b| b.binding == 1)
        .unwrap()
        .bytes;
    let totals: Vec<u32> = out
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(totals, vec![(0..64).sum::<u32>(), (64..128).sum::<u32>()]);
}

#[test]
fn without_the_barrier_the_partials_race() {
    let report = job(&[("FORGET_BARRIER", "1")]).check(8).expect("runs");
    assert!(!report.ok());
    assert!(report.text().contains("race"), "{}", report.text());
}
