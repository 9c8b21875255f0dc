//! What an emulated launch costs the host: an empty kernel on 2 blocks of
//! 32 threads, launched over and over on the emulated T4, with 1 and with 2
//! workers. Prints, per launch, the wall time and the CPU time of the whole
//! process (user and system, from `getrusage`): on a loaded machine the wall
//! time also holds the waits for a core, the CPU time does not.
//!
//! `cargo run --release -p host --features emulator-only --example emulated_launch -- [ROUNDS]`
//! prints one line per worker count: the median of ROUNDS rounds (default
//! 7) of 500 launches, and the smallest and largest round.

use host::device::{EmulatedDevice, Gpu};
use std::time::Instant;

// The kernels, which the host library reaches through `host::kernels()`.
use gpu as _;
use gpu_ptx as _;

/// Launches per round.
const LAUNCHES: u32 = 500;

/// CPU seconds this process has used, user and system.
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage writes the struct it is given.
    let usage = unsafe {
        let mut u = std::mem::zeroed::<libc::rusage>();
        libc::getrusage(libc::RUSAGE_SELF, &mut u);
        u
    };
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    s(usage.ru_utime) + s(usage.ru_stime)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let rounds: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(7);
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "An empty kernel on 2 x 32 threads, emulated T4, {rounds} rounds of {LAUNCHES} launches; load average {}",
        load.split(' ').take(3).collect::<Vec<_>>().join(" ")
    );
    for workers in [1, 2] {
        let gpu = Gpu::emulated(EmulatedDevice::T4, cg_emulator::Options { workers, ..Default::default() });
        let kernel = gpu.kernel(&host::kernels().empty)?;
        // SAFETY: the kernel touches nothing.
        unsafe { kernel.launch(2, 32, ())? };
        let (mut wall, mut cpu) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            let (start, cpu_start) = (Instant::now(), cpu_seconds());
            for _ in 0..LAUNCHES {
                // SAFETY: as above.
                unsafe { kernel.launch(2, 32, ())? };
            }
            gpu.finish()?;
            wall.push(start.elapsed().as_secs_f64() * 1e6 / LAUNCHES as f64);
            cpu.push((cpu_seconds() - cpu_start) * 1e6 / LAUNCHES as f64);
        }
        let median = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            format!("{:7.1} [{:.1}, {:.1}]", v[v.len() / 2], v[0], v[v.len() - 1])
        };
        println!("  {workers} worker{}: microseconds per launch, wall {}, CPU {}", if workers == 1 { " " } else { "s" }, median(&mut wall), median(&mut cpu));
    }
    Ok(())
}
