//! Each of cg-algorithms' calls once, on the emulated GPU (or on CUDA
//! device 0 with `--gpu`): `cargo run -p cg-algorithms --example first_calls`.

use cg_algorithms::{Algorithms, Op, Order, Rule};
use cg_launcher::device::{EmulatedDevice, Gpu};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let gpu = if std::env::args().any(|a| a == "--gpu") { Gpu::open(0)? } else { Gpu::emulated(EmulatedDevice::T4, Default::default()) };
    let mut alg = Algorithms::new(&gpu);

    let xs: Vec<f32> = (0..100_000).map(|i| (i % 7) as f32 - 3.0).collect();
    let x = gpu.upload(&xs)?;
    println!("sum {}, min {}, max {}", alg.reduce(&x, Op::Sum)?, alg.reduce(&x, Op::Min)?, alg.reduce(&x, Op::Max)?);

    let mut y = gpu.zeros::<f32>(xs.len())?;
    alg.exclusive_scan(&x, &mut y, Op::Sum)?;
    println!("exclusive sum: y[99999] = {}", gpu.read(&y)?[99_999]);

    let kept = alg.select_if(&x, &mut y, Rule::Greater(1.0))?;
    println!("{kept} elements above 1, the first {:?}", &gpu.read(&y)?[..3]);

    let bytes = gpu.upload(&(0..=255u8).cycle().take(10_000).collect::<Vec<u8>>())?;
    let mut bins = gpu.zeros::<u32>(4)?;
    alg.histogram_even(&bytes, &mut bins, 0, 256)?;
    println!("bytes in 4 bins of 64 values: {:?}", gpu.read(&bins)?);

    let keys = gpu.upload(&[2.5f32, -1.0, 0.0, 7.0, -0.0, -3.5])?;
    let mut sorted = gpu.zeros::<f32>(6)?;
    alg.sort_keys(&keys, &mut sorted, Order::ASCENDING)?;
    println!("sorted: {:?}", gpu.read(&sorted)?);
    Ok(())
}
