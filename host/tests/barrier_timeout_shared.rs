//! The concurrent-launch test broken on purpose, in the diagnosing build:
//! two watched launches in flight that share one block of barrier memory,
//! as every launch shared the module's static before 2026-12-02, count each
//! other's arrivals and never finish; the diagnosing barrier names that.
//! Then the launch after one that trapped: CUDA ends a process's use of the
//! GPU at a trap (every later call fails with it, and a context reset does
//! not clear it: measured on an H200, 2026-12-02), so the next launch is a
//! new process's, and it runs the same two launches, each with memory of its
//! own, clean. Its own test binary, because the trap ends this one's context.
// The launcher's mutants exist only under `--cfg cg_mutants` (scripts/test.sh).
#![cfg(all(cg_mutants, feature = "barrier-timeout"))]

// The kernels the host library reaches through `host::kernels()`.
use gpu as _;
use gpu_ptx as _;

use host::device::Gpu;
use host::error::Error;

mod concurrent_case;
use cg_launcher::error::Error as L;
use concurrent_case::{Queue, stress_together};

/// Blocks per launch: two watched launches that fit on the GPU together.
fn half_the_ceiling(gpu: &Gpu, threads: u32) -> u32 {
    let blocks = gpu.cooperative_kernel(&host::kernels().grid_sync_stress).unwrap().limits(threads).unwrap().capacity() / 2;
    assert!(gpu::cg::barrier::is_watched(blocks), "{blocks} blocks of {threads} take the watched barrier");
    blocks
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn two_watched_launches_each_with_barrier_memory_of_its_own_run_clean() {
    let gpu = Gpu::open(0).unwrap();
    let blocks = half_the_ceiling(&gpu, 32);
    let t = stress_together(&gpu, 2, blocks, 32, 100_000, Queue::Streams).unwrap();
    println!("2 x {blocks} blocks of 32 with memory of their own: stale reads {:?}, {:.3} s", t.stale, t.seconds);
    assert_eq!(t.stale, vec![0, 0]);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn two_watched_launches_sharing_barrier_memory_are_named_and_the_next_process_runs_them_clean() {
    let threads = 32;
    let gpu = Gpu::open(0).unwrap();
    let blocks = half_the_ceiling(&gpu, threads);
    gpu.mutant_share_barrier_memory();
    gpu.set_timeout(std::time::Duration::from_secs(30));
    let started = std::time::Instant::now();
    match stress_together(&gpu, 2, blocks, threads, 100_000, Queue::Streams) {
        Err(Error::Launch(L::GridBarrierTimedOut { kernel, report })) => {
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
    // In this process the GPU is gone for good:
    let again = Gpu::open(0).err().expect("CUDA refuses this process after a trap");
    println!("in the same process: {again}");
    // The next process's launches, each with memory of its own.
    let next = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "two_watched_launches_each_with_barrier_memory_of_its_own_run_clean", "--include-ignored", "--nocapture"])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&next.stdout);
    println!("the next process: {}", out.lines().filter(|l| l.contains("stale") || l.starts_with("test result")).collect::<Vec<_>>().join(" | "));
    assert!(next.status.success() && out.contains("1 passed"), "{out}{}", String::from_utf8_lossy(&next.stderr));
}
