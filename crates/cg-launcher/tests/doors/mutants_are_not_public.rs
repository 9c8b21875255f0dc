//! A test-only mutant that frees memory a kernel still uses, switched on
//! from safe code through an additive feature.
use cg_launcher::device::{EmulatedDevice, Gpu};

fn main() {
    let gpu = Gpu::emulated(EmulatedDevice::T4, Default::default());
    gpu.mutant_unordered_branch_memory();
    gpu.mutant_share_barrier_memory();
}
