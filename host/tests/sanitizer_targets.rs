//! Launches made to break each of compute-sanitizer's tools, one per test:
//! `scripts/sanitize.sh` runs each under its tool and fails unless the tool
//! reports errors (a check that has never failed is not yet a check). Each
//! test only asserts that its launch ran; what is wrong with it is the
//! sanitizer's to find. GPU only, so marked ignored; on the emulator the same
//! kernels are named by `tests/emulated.rs`.

use gpu::kernels::{
    REDUCE_BLOCKS_TO_PARTIALS, REDUCE_PARTIALS_TO_TOTAL, SANITIZER_BLOCK_SUM_RACE, SANITIZER_DIVERGENT_ALIGNED_BLOCK_SYNC, SANITIZER_READS_PAST_N,
};
use gpu_ptx as _;
use host::device::Gpu;
use host::launch::prelude::*;
use host::reference;

/// The lesson's n is where racecheck's default report once printed 0 hazards.
const N: usize = 4_194_915;

fn gpu() -> Gpu {
    Gpu::open(0).expect("a GPU")
}

/// Runs a first-stage kernel over exactly `n` floats (no guard after them) on `blocks` blocks of 256.
fn first_stage(def: &gpu::kernels::KernelDef<(gpu::mem::In<f32>, gpu::mem::Out<f32>, usize), gpu::kernels::NoGridSync>, n: usize, blocks: u32) {
    let gpu = gpu();
    let input = gpu.upload(&reference::fill(n).unwrap()).unwrap();
    let mut partials = gpu.zeros::<f32>(blocks as usize).unwrap();
    gpu.kernel(def).unwrap().reduce(blocks, 256, &input.slice(..), partials.slice_mut(..)).unwrap();
    println!("{}: partial 0 = {}", def.name(), gpu.read(&partials).unwrap()[0]);
}

#[test]
#[ignore = "needs an NVIDIA GPU; run by scripts/sanitize.sh under memcheck"]
fn memcheck_target_a_loop_that_reads_past_n() {
    first_stage(&SANITIZER_READS_PAST_N, 611, 3);
}

#[test]
#[ignore = "needs an NVIDIA GPU; run by scripts/sanitize.sh under racecheck"]
fn racecheck_target_block_sum_without_its_first_block_sync() {
    first_stage(&SANITIZER_BLOCK_SUM_RACE, N, 1056);
}

#[test]
#[ignore = "needs an NVIDIA GPU; run by scripts/sanitize.sh under synccheck"]
fn synccheck_target_an_aligned_block_sync_only_lane_0_of_each_warp_reaches() {
    first_stage(&SANITIZER_DIVERGENT_ALIGNED_BLOCK_SYNC, 611, 3);
}

#[test]
#[ignore = "needs an NVIDIA GPU; run by scripts/sanitize.sh under initcheck"]
fn initcheck_target_a_partial_no_block_writes() {
    // The first stage runs one block fewer than the second stage reads
    // partials for: the last partial is never written.
    let gpu = gpu();
    let n = 611;
    let input = gpu.upload(&reference::fill(n).unwrap()).unwrap();
    let mut partials = gpu.uninit::<f32>(3).unwrap();
    let mut out = gpu.zeros::<f32>(1).unwrap();
    gpu.kernel(&REDUCE_BLOCKS_TO_PARTIALS).unwrap().reduce(2, 256, &input.slice(..), partials.slice_mut(..2)).unwrap();
    gpu.kernel(&REDUCE_PARTIALS_TO_TOTAL).unwrap().reduce(1, 256, &partials.slice(..), out.slice_mut(..)).unwrap();
    println!("total over 3 partials, 2 written: {}", gpu.read(&out).unwrap()[0]);
}
