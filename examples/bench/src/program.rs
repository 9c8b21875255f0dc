//! What each example's `main` does the same way: the device it runs on,
//! the sizes it checks, sizes refused before anything is allocated, and
//! the exit status.

use cg_launcher::device::{EmulatedDevice, Gpu};
use cg_launcher::sizing::Limits;
use std::process::ExitCode;

/// The emulated T4 (`--emulate`), or CUDA device 0.
pub fn device(emulate: bool) -> Result<Gpu, String> {
    if emulate { Ok(Gpu::emulated(EmulatedDevice::T4, Default::default())) } else { Gpu::open(0).map_err(|e| e.to_string()) }
}

/// The sizes given with `--n`, or else the ladder: on the emulator without
/// its last `gpu_only` rungs.
pub fn sizes(gpu: &Gpu, given: &[usize], ladder: &[usize], gpu_only: usize) -> Vec<usize> {
    if !given.is_empty() {
        given.to_vec()
    } else if gpu.info.emulated {
        ladder[..ladder.len().saturating_sub(gpu_only)].to_vec()
    } else {
        ladder.to_vec()
    }
}

/// Refuses `--n n` where `host_per` bytes per element do not fit in the
/// host's free memory or `device_per` in the device's, saying so.
pub fn memory_fits(gpu: &Gpu, n: usize, host_per: u64, device_per: u64) -> Result<(), String> {
    let bytes = |per: u64| (n as u64).saturating_mul(per);
    if let Some(free) = cg_launcher::device::host_available().filter(|&free| bytes(host_per) > free) {
        return Err(format!("--n {n} needs {} MiB of host memory and {} MiB is free: give a smaller --n", bytes(host_per) >> 20, free >> 20));
    }
    let free = gpu.free_memory().map_err(|e| e.to_string())?;
    if bytes(device_per) > free {
        return Err(format!("--n {n} needs {} MiB of device memory and {} MiB is free: give a smaller --n", bytes(device_per) >> 20, free >> 20));
    }
    Ok(())
}

/// The ladder's first line: `kernel on device: blocks of threads, at most
/// b block(s)/SM x s SMs = c in one cooperative launch`.
pub fn header(kernel: &str, gpu: &Gpu, threads: u32, limits: &Limits) -> String {
    let per_sm = if limits.blocks_per_sm == 1 { "block" } else { "blocks" };
    format!(
        "{kernel} on {}: blocks of {threads}, at most {} {per_sm}/SM x {} SMs = {} in one cooperative launch",
        gpu.info.name,
        limits.blocks_per_sm,
        limits.sms,
        limits.capacity()
    )
}

/// Refuses `--bench` on the emulator, whose time is no GPU's.
pub fn bench_needs_a_gpu(gpu: &Gpu, bench: bool) -> Result<(), String> {
    if bench && gpu.info.emulated {
        return Err(cg_launcher::error::Error::NotOnEmulator("--bench").to_string());
    }
    Ok(())
}

/// The exit status of a run: success when every check passed; otherwise
/// one line on stderr.
pub fn exit(run: Result<bool, String>) -> ExitCode {
    match run {
        Ok(true) => {
            println!("all checks passed");
            ExitCode::SUCCESS
        }
        Ok(false) => {
            eprintln!("error: a check failed (above)");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
