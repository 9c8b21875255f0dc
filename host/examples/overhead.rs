//! What the launcher costs the host, call by call: loading a kernel and
//! sizing its cooperative grid, a launch (ordinary and cooperative) of an
//! empty kernel (and an ordinary one of 2 blocks of 32 threads, the smallest
//! the emulator's costs are judged by), a write and read back of one float, and a `finish()` with
//! nothing queued. Written against the launcher's API as it was before
//! issue 55 and as it is after, so the same file builds both, and one GPU
//! run times them side by side (`scripts/measure-overhead.sh`).
//!
//! `cargo run --release -p host --example overhead -- [--emulate] [ROUNDS]`
//! prints one line per measure: the median of ROUNDS rounds (default 15)
//! of microseconds per call, and the smallest and largest round.

use host::device::{EmulatedDevice, Gpu};
use std::time::Instant;

// The kernels, which the host library reaches through `host::kernels()`.
use gpu as _;
use gpu_ptx as _;

/// Calls per round of each measure.
const CALLS: usize = 256;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let gpu = if args.iter().any(|a| a == "--emulate") { Gpu::emulated(EmulatedDevice::T4, Default::default()) } else { Gpu::open(0)? };
    let rounds: usize = args.iter().find_map(|a| a.parse().ok()).unwrap_or(15);
    let k = host::kernels();
    let mut buffer = gpu.upload(&[0.0f32; 1])?;
    // Warm: the module loaded, each kernel loaded once.
    gpu.kernel(&k.empty)?.limits(256)?;
    gpu.cooperative_kernel(&k.empty_cooperative)?.limits(256)?;
    gpu.finish()?;

    let mut measures: Vec<(&str, Vec<f64>)> = Vec::new();
    let mut per_call = |name: &'static str, f: &mut dyn FnMut() -> Result<(), Box<dyn std::error::Error>>| -> Result<(), Box<dyn std::error::Error>> {
        let mut us = Vec::with_capacity(rounds);
        for _ in 0..rounds {
            gpu.finish()?;
            let start = Instant::now();
            for _ in 0..CALLS {
                f()?;
            }
            us.push(start.elapsed().as_secs_f64() * 1e6 / CALLS as f64);
        }
        measures.push((name, us));
        Ok(())
    };
    per_call("load + limits + configure (cooperative)", &mut || {
        let kernel = gpu.cooperative_kernel(&k.empty_cooperative)?;
        let capacity = kernel.limits(256)?.capacity();
        kernel.configure(capacity, 256)?;
        Ok(())
    })?;
    per_call("load + limits (ordinary)", &mut || {
        gpu.kernel(&k.empty)?.limits(256)?;
        Ok(())
    })?;
    let ordinary = gpu.kernel(&k.empty)?;
    per_call("launch (ordinary, 132 x 256, empty)", &mut || {
        // SAFETY: the kernel touches nothing.
        unsafe { ordinary.launch(132, 256, ())? };
        Ok(())
    })?;
    per_call("launch (ordinary, 2 x 32, empty)", &mut || {
        // SAFETY: the kernel touches nothing.
        unsafe { ordinary.launch(2, 32, ())? };
        Ok(())
    })?;
    let cooperative = gpu.cooperative_kernel(&k.empty_cooperative)?;
    let launch = cooperative.configure(132, 256)?;
    per_call("launch (cooperative, 132 x 256, empty)", &mut || {
        // SAFETY: the kernel touches nothing.
        unsafe { launch.launch(())? };
        Ok(())
    })?;
    per_call("write + read of one float", &mut || {
        gpu.write(&mut buffer, 0, &[1.0])?;
        gpu.read(&buffer)?;
        Ok(())
    })?;
    per_call("finish, nothing queued", &mut || Ok(gpu.finish()?))?;

    println!("{} ({} rounds of {CALLS} calls; microseconds per call: median [smallest, largest] round)", gpu.info.name, rounds);
    for (name, mut us) in measures {
        us.sort_by(f64::total_cmp);
        println!("  {name:42} {:8.3}  [{:.3}, {:.3}]", us[us.len() / 2], us[0], us[us.len() - 1]);
    }
    Ok(())
}
