//! The sum across GPUs on emulated devices (these run in CI): both ways,
//! checked against the double reference, at sizes that leave GPUs without
//! floats or with uneven shards; a GPU that never arrives is named; the
//! input made on the device is the host's.

mod common;

use gpu::emu::{Device, Options};
use gpu_ptx as _;
use host::device::Gpu;
use host::error::{Error, Result};
use host::launch::{DeviceInput, Input};
use host::multi::{self, MultiConfig, MultiReport, NcclMode, Way};
use std::process::Command;
use std::time::Duration;

/// A small emulated device, so that a grid of several GPUs runs quickly.
const SMALL: Device = Device { sms: 4, ..Device::T4 };

fn config(n: usize) -> MultiConfig {
    MultiConfig {
        n,
        threads_per_block: 128,
        warmups: 1,
        runs: 2,
        nccl: NcclMode::InProcess,
        sweep: None,
        never_launch: None,
        without_barrier_across: false,
        timeout: Duration::from_secs(60),
        emulated: true,
    }
}

fn run(cfg: &MultiConfig, gpus: u32) -> Result<MultiReport> {
    let open = |_: u32| Ok(Gpu::emulated(SMALL, Options::default()));
    multi::run(cfg, gpus, &open, &|_| {})
}

fn assert_all_pass(r: &MultiReport, what: &str) {
    assert!(!r.checks.is_empty(), "{what}: no checks");
    for c in &r.checks {
        assert!(c.pass(), "{what}: {} ({})", c.name, c.detail);
    }
}

#[test]
fn both_ways_pass_every_check_on_two_three_and_one_emulated_gpus() {
    for (n, gpus) in [(100_003, 2), (4_194_915 / 64, 3), (5_000, 1)] {
        let r = run(&config(n), gpus).unwrap();
        assert_all_pass(&r, &format!("n = {n} on {gpus}"));
        assert_eq!(r.gpus.len(), gpus as usize);
        assert_eq!(r.gpus.iter().map(|g| g.shard.len).sum::<usize>(), n);
        for way in [Way::AcrossGpus, Way::Nccl] {
            let sum = r.sums.iter().find(|s| s.way == way).unwrap();
            assert_eq!(sum.gpus.len(), gpus as usize, "{way:?}");
            // Path a's total is on GPU 0; path b's on every GPU.
            assert_eq!(sum.combined.len(), if way == Way::AcrossGpus { 1 } else { gpus as usize });
        }
        assert!(r.nccl.contains("stand-in"), "{}", r.nccl);
        // Every way was timed, and every timed total checked.
        assert_eq!(r.timing.len(), 3, "{:?}", r.timing.iter().map(|t| t.way).collect::<Vec<_>>());
        assert!(r.pieces.barrier.is_some() && r.pieces.all_reduce_queued.is_some());
    }
}

#[test]
fn fewer_floats_than_gpus_uneven_shards_and_nothing_at_all_still_check() {
    for (n, gpus) in [(0, 2), (1, 3), (2, 3), (7, 2), (1025, 4)] {
        let mut cfg = config(n);
        cfg.runs = 1;
        let r = run(&cfg, gpus).unwrap();
        assert_all_pass(&r, &format!("n = {n} on {gpus}"));
        // A GPU with an empty shard still runs one block and meets the others.
        assert!(r.gpus.iter().all(|g| g.grids[0] >= 1 && g.grids[1] >= 1));
        let a = r.sums.iter().find(|s| s.way == Way::AcrossGpus).unwrap();
        assert_eq!(a.combined[0].reference, host::reference::fill_range_sum(0, n));
    }
}

#[test]
fn a_gpu_that_never_launches_its_part_is_named_by_the_others() {
    let mut cfg = config(10_000);
    cfg.never_launch = Some(1);
    cfg.nccl = NcclMode::Off;
    let err = run(&cfg, 3).unwrap_err();
    match &err {
        Error::AcrossGpusTimedOut { missing, seconds, .. } => {
            assert_eq!(missing, &[1], "{err}");
            assert_eq!(*seconds, 5.0);
        }
        e => panic!("expected the barrier across GPUs to name GPU 1, got: {e}"),
    }
    assert!(err.to_string().contains("for GPU 1, which never arrived"), "{err}");
}

#[test]
fn deleting_the_barrier_across_gpus_fails_the_checks() {
    let mut cfg = config(100_003);
    cfg.without_barrier_across = true;
    cfg.nccl = NcclMode::Off;
    common::assert_the_missing_barrier_is_caught(&run(&cfg, 2).unwrap());
}

#[test]
fn without_nccl_only_the_grid_across_gpus_runs() {
    let mut cfg = config(3_000);
    cfg.nccl = NcclMode::Off;
    let r = run(&cfg, 2).unwrap();
    assert_all_pass(&r, "--no-nccl");
    assert_eq!(r.sums.iter().map(|s| s.way).collect::<Vec<_>>(), [Way::AcrossGpus]);
    assert_eq!(r.nccl, "off");
}

#[test]
fn the_sweep_times_one_gpu_against_every_gpu_at_each_power_of_two() {
    let mut cfg = config(2_000);
    cfg.sweep = Some((10, 12));
    cfg.warmups = 0;
    cfg.runs = 1;
    let r = run(&cfg, 2).unwrap();
    assert_all_pass(&r, "sweep");
    assert_eq!(r.sweep.iter().map(|p| p.n).collect::<Vec<_>>(), [1024, 2048, 4096]);
    assert!(r.sweep.iter().all(|p| p.one_gpu_ms > 0.0 && p.across_ms.is_some() && p.nccl_ms.is_some()));
    assert!(r.crossover.across.is_some() && r.crossover.nccl.is_some());
}

#[test]
fn the_input_made_on_the_device_is_the_hosts_input() {
    let gpu = Gpu::emulated(SMALL, Options::default());
    for (first, len) in [(0, 5_000), (123_457, 3_001), ((1 << 31) - 5, 2_000), (7, 0)] {
        let input = DeviceInput::lesson_range(&gpu, first, len).unwrap();
        let got = gpu.read_view(&input.view()).unwrap();
        assert_eq!(got, host::reference::fill_range(first, len).unwrap(), "{first}+{len}");
        assert!(input.guard() >= host::launch::GUARD);
    }
}

fn cg_lesson(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_cg-lesson")).args(args).output().unwrap()
}

#[test]
fn cg_lesson_multi_gpu_runs_on_emulated_gpus_and_names_its_mistakes() {
    let out = cg_lesson(&["multi-gpu", "--emulate", "--gpus", "2", "--sms", "4", "--n", "20000"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    for needle in [
        "The sum over 2 GPUs",
        "4 blocks/SM x 4 SMs = 16",
        "(a) grid across GPUs, in the kernel",
        "host stand-in for NCCL",
        "combined on GPU 1",
        "checks passed",
    ] {
        assert!(text.contains(needle), "{needle}: {text}");
    }
    assert!(!text.contains(" x one GPU"), "no ratios of the emulator's CPU time: {text}");
    let out = cg_lesson(&["multi-gpu", "--emulate", "--sms", "4", "--n", "2000", "--json"]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["status"], "passed");
    assert_eq!(json["gpus"].as_array().unwrap().len(), 2, "two emulated GPUs by default");
    for (args, needle) in [
        (&["multi-gpu", "--emulate", "--sms", "4", "--never-launch", "1", "--no-nccl"][..], "GPU 0 waited 5 s for GPU 1, which never arrived"),
        (&["multi-gpu", "--emulate", "--never-launch", "5"], "--never-launch 5 is out of range: there are 2 ranks, numbered from 0 to 1"),
        (&["multi-gpu", "--rank", "3", "--ranks", "2", "--nccl-id", "/nonexistent/nccl.id"], "--rank 3 is out of range: there are 2 ranks"),
        (&["multi-gpu", "--emulate", "--min-log2", "12", "--max-log2", "10"], "--min-log2 12 is above --max-log2 10"),
    ] {
        let out = cg_lesson(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(needle) && !err.contains("panicked") && err.lines().count() == 1, "{args:?}: {err}");
    }
}
