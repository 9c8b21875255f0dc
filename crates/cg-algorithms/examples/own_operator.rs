//! A reduce and a scan by operators of one's own, whose kernels
//! `operator_kernels!` stamped in `examples/algorithms/operators`, on the
//! emulated GPU (or on CUDA device 0 with `--gpu`):
//! `cargo run -p cg-algorithms --example own_operator`.

use algorithms_operators::{ABS_MAX, GCD};
use cg_algorithms::Algorithms;
use cg_launcher::device::{EmulatedDevice, Gpu};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let gpu = if std::env::args().any(|a| a == "--gpu") { Gpu::open(0)? } else { Gpu::emulated(EmulatedDevice::T4, Default::default()) };
    let mut alg = Algorithms::new(&gpu);

    let x = gpu.upload(&[2.5f32, -7.0, 3.0, 7.0, -1.0])?;
    println!("largest by absolute value: {}", alg.reduce_with(&x, &ABS_MAX)?);
    let mut y = gpu.zeros::<f32>(5)?;
    alg.inclusive_scan_with(&x, &mut y, &ABS_MAX)?;
    println!("running: {:?}", gpu.read(&y)?);

    let x = gpu.upload(&(1..=10_000u32).map(|i| 12 * i).collect::<Vec<_>>())?;
    println!("gcd of 12, 24, ..., 120000: {}", alg.reduce_with(&x, &GCD)?);
    Ok(())
}
