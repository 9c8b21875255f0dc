//! The sum across GPUs on real GPUs: needs two NVIDIA GPUs and NCCL found
//! as `libnccl.so` (`scripts/multi-gpu-check.sh` links the pip wheel's
//! library so). Marked `#[ignore]`, so a CPU-only run lists them by name.

// The kernels the host library reaches through `host::kernels()`.
use gpu as _;
use gpu_ptx as _;
mod common;

use host::device::{Gpu, cuda_device_count};
use host::error::Result;
use host::multi::{self, MultiConfig, MultiReport, NcclMode, Way};
use std::time::Duration;

fn config(n: usize, nccl: NcclMode) -> MultiConfig {
    MultiConfig {
        n,
        threads_per_block: 256,
        warmups: 1,
        runs: 3,
        nccl,
        sweep: None,
        never_launch: None,
        without_barrier_across: false,
        timeout: Duration::from_secs(60),
        emulated: false,
    }
}

fn run(cfg: &MultiConfig) -> Result<MultiReport> {
    assert!(cuda_device_count().unwrap() >= 2, "these tests need two GPUs");
    let open = |r: u32| Ok(Gpu::open(r as usize)?);
    multi::run(cfg, 2, &open, &|_| {})
}

fn assert_all_pass(r: &MultiReport, what: &str) {
    for c in &r.checks {
        assert!(c.pass(), "{what}: {} ({})", c.name, c.detail);
    }
}

#[test]
#[ignore = "needs two NVIDIA GPUs and NCCL"]
fn both_ways_pass_every_check_on_two_gpus_at_the_lessons_size_and_the_edges() {
    host::nccl::library().expect("NCCL as libnccl.so");
    for n in [4_194_915, 0, 1, 7, 1_000_003] {
        let r = run(&config(n, NcclMode::InProcess)).unwrap();
        assert_all_pass(&r, &format!("n = {n}"));
        assert_eq!(r.sums.len(), 2);
        assert!(r.nccl.starts_with("NCCL 2."), "{}", r.nccl);
        let a = r.timing.iter().find(|t| t.way == Way::AcrossGpus).unwrap();
        println!("n = {n}: path a {:.1} us, grids {:?}", a.stats.mean_ms * 1e3, r.gpus.iter().map(|g| g.grids).collect::<Vec<_>>());
    }
}

#[test]
#[ignore = "needs two NVIDIA GPUs"]
fn deleting_the_barrier_across_gpus_fails_the_checks_on_two_gpus() {
    let mut cfg = config(1 << 20, NcclMode::Off);
    cfg.without_barrier_across = true;
    common::assert_the_missing_barrier_is_caught(&run(&cfg).unwrap());
}
