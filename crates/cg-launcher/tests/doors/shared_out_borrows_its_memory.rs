//! Memory every device reaches, handed to a launch after it was freed: the
//! handle borrows the `Shared`, so it cannot outlive it.
use cg_launcher::device::{EmulatedDevice, Gpu};

fn main() -> cg_launcher::error::Result<()> {
    let gpu = Gpu::emulated(EmulatedDevice::T4, Default::default());
    let out = {
        let shared = gpu.shared::<u32>(4)?;
        shared.out()
    };
    println!("{}", out.len());
    Ok(())
}
