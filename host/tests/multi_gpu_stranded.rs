//! A GPU whose part of the sum across GPUs is never launched, on real
//! GPUs: the others trap after the bounded wait, which leaves their CUDA
//! contexts unusable for the rest of the process, so this test has a test
//! binary (a process) of its own. Needs two NVIDIA GPUs; `#[ignore]`d.

// The kernels the host library reaches through `host::kernels()`.
use gpu as _;
use gpu_ptx as _;
use host::device::{Gpu, cuda_device_count};
use host::error::Error;
use host::multi::{self, MultiConfig, NcclMode};
use std::time::Duration;

#[test]
#[ignore = "needs two NVIDIA GPUs"]
fn a_gpu_whose_part_is_never_launched_is_named_after_the_bounded_wait() {
    assert!(cuda_device_count().unwrap() >= 2, "this test needs two GPUs");
    let cfg = MultiConfig {
        n: 1 << 20,
        threads_per_block: 256,
        warmups: 1,
        runs: 3,
        nccl: NcclMode::Off,
        sweep: None,
        never_launch: Some(1),
        without_barrier_across: false,
        timeout: Duration::from_secs(60),
        emulated: false,
    };
    let start = std::time::Instant::now();
    let open = |r: u32| Ok(Gpu::open(r as usize)?);
    let err = multi::run(&cfg, 2, &open, &|_| {}).unwrap_err();
    println!("{err} (after {:.1} s)", start.elapsed().as_secs_f64());
    assert!(matches!(&err, Error::AcrossGpusTimedOut { gave_up: 0, missing, .. } if missing == &[1]), "{err}");
}
