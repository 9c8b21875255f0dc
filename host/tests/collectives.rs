//! The collective algorithms and the match collectives on the emulated T4,
//! against the CPU model in `collectives_case/`: each tile collective on
//! tiles of 1 to 32, each block collective on each tile size and on blocks
//! of one warp to 1024 threads (96 and 480 among them: not a power of two),
//! every operator, each element type, random inputs (and inputs drawn from
//! five values, for the matches and for ties), every result bit for bit.

mod collectives_case;
use collectives_case::{Draw, Elem, check_blocks, check_the_model, check_tiles};
use gpu::emu::{Device, Options};
use gpu_ptx as _;
use host::device::Gpu;

fn t4() -> Gpu {
    Gpu::emulated(Device::T4, Options::default())
}

fn tiles_of<T: Elem>() {
    let gpu = t4();
    check_tiles::<T>(&gpu, 2, 64, Draw::Random, 1);
    check_tiles::<T>(&gpu, 2, 64, Draw::Pool, 2);
}

fn blocks_of<T: Elem>() {
    let gpu = t4();
    for tile in [1, 2, 4, 8, 16, 32] {
        check_blocks::<T>(&gpu, 2, 96, tile, 10 + tile as u64);
    }
    for (threads, tile) in [(32, 32), (480, 16), (992, 8), (1024, 32), (1024, 1)] {
        check_blocks::<T>(&gpu, 1, threads, tile, threads as u64 + tile as u64);
    }
}

#[test]
fn the_model_agrees_with_a_plain_fold_on_integers_and_within_a_bound_on_floats() {
    check_the_model::<u32>(1);
    check_the_model::<i64>(2);
    check_the_model::<f32>(3);
    check_the_model::<f64>(4);
}

#[test]
fn tile_reductions_scans_and_matches_of_u32_and_i32_match_the_model() {
    tiles_of::<u32>();
    tiles_of::<i32>();
}

#[test]
fn tile_reductions_scans_and_matches_of_u64_and_i64_match_the_model() {
    tiles_of::<u64>();
    tiles_of::<i64>();
}

#[test]
fn tile_reductions_scans_and_matches_of_f32_and_f64_match_the_model_bit_for_bit() {
    tiles_of::<f32>();
    tiles_of::<f64>();
}

#[test]
fn block_reductions_and_scans_of_u32_and_i32_match_the_model() {
    blocks_of::<u32>();
    blocks_of::<i32>();
}

#[test]
fn block_reductions_and_scans_of_u64_and_i64_match_the_model() {
    blocks_of::<u64>();
    blocks_of::<i64>();
}

#[test]
fn block_reductions_and_scans_of_f32_and_f64_match_the_model_bit_for_bit() {
    blocks_of::<f32>();
    blocks_of::<f64>();
}
