//! The concurrent-launch test broken on purpose, in the diagnosing build:
//! two watched launches in flight that share one block of barrier memory,
//! as every launch shared the module's static before 2026-12-02, count each
//! other's arrivals and never finish; the diagnosing barrier names that.
//! Then the launch after one that trapped: a fresh context runs the same
//! two launches, each with memory of its own, clean. Its own test binary,
//! because the trap leaves the first context unusable.
#![cfg(feature = "barrier-timeout")]

// The kernels the host library reaches through `host::kernels()`.
use gpu as _;

use host::device::Gpu;
use host::error::Error;

mod concurrent_case;
use concurrent_case::{Queue, stress_together};

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn two_watched_launches_sharing_barrier_memory_are_caught_and_after_the_trap_a_fresh_context_runs_them_clean() {
    let threads = 32;
    let gpu = Gpu::open(0).unwrap();
    let capacity = gpu.cooperative_kernel(&host::kernels().grid_sync_stress).unwrap().limits(threads).unwrap().capacity();
    let blocks = capacity / 2;
    assert!(gpu::cg::barrier::is_watched(blocks), "{blocks} blocks of {threads} take the watched barrier");
    gpu.mutant_share_barrier_memory();
    gpu.set_timeout(std::time::Duration::from_secs(30));
    let started = std::time::Instant::now();
    match stress_together(&gpu, 2, blocks, threads, 100_000, Queue::Streams) {
        Err(Error::GridBarrierTimedOut { kernel, report }) => {
            println!("2 x {blocks} blocks of {threads} sharing barrier memory, after {:.2} s: {report:?}", started.elapsed().as_secs_f64());
            assert_eq!(kernel, "grid_sync_stress");
            assert_eq!(report.expected, blocks);
        }
        Err(other) => panic!("expected the diagnosing barrier's report, got: {other}"),
        Ok(t) => {
            println!("2 x {blocks} blocks of {threads} sharing barrier memory finished: stale reads {:?}", t.stale);
            assert!(t.stale.iter().any(|&s| s > 0), "launches sharing barrier memory passed the check: the test cannot see the bug");
        }
    }
    drop(gpu);
    let gpu = Gpu::open(0).unwrap();
    let t = stress_together(&gpu, 2, blocks, threads, 100_000, Queue::Streams).unwrap();
    println!("then, in a fresh context, 2 x {blocks} blocks of {threads} with memory of their own: stale reads {:?}, {:.3} s", t.stale, t.seconds);
    assert_eq!(t.stale, vec![0, 0]);
}
