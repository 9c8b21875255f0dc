//! The collective algorithms and the match collectives on a GPU, against the
//! same CPU model as on the emulator (`collectives_case/`), every result bit
//! for bit: more blocks, every tile size of the tile collectives, and the
//! block collectives on tiles of 32 and of 1 at every block size from one
//! warp to 1024 threads.
//! Marked `#[ignore]`: run with `--include-ignored` on a machine with a GPU.

mod collectives_case;
use collectives_case::{Draw, Elem, check_blocks, check_tiles};
use gpu_ptx as _;
use host::device::Gpu;

fn gpu() -> Gpu {
    Gpu::open(0).expect("a CUDA GPU")
}

fn on_the_gpu<T: Elem>(gpu: &Gpu) {
    for (seed, draw) in [(1, Draw::Random), (2, Draw::Pool), (3, Draw::Random)] {
        check_tiles::<T>(gpu, 16, 256, draw, seed);
    }
    // The GPU's module has the block kernels on tiles of 32 and of 1 (the
    // emulator's test runs every size).
    for threads in [32, 64, 96, 128, 160, 256, 480, 512, 992, 1024] {
        for tile in [1, 32] {
            check_blocks::<T>(gpu, 8, threads, tile, threads as u64 * 64 + tile as u64);
        }
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn tile_and_block_collectives_of_32_bit_integers_match_the_model_on_the_gpu() {
    let gpu = gpu();
    on_the_gpu::<u32>(&gpu);
    on_the_gpu::<i32>(&gpu);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn tile_and_block_collectives_of_64_bit_integers_match_the_model_on_the_gpu() {
    let gpu = gpu();
    on_the_gpu::<u64>(&gpu);
    on_the_gpu::<i64>(&gpu);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn tile_and_block_collectives_of_floats_match_the_model_bit_for_bit_on_the_gpu() {
    let gpu = gpu();
    on_the_gpu::<f32>(&gpu);
    on_the_gpu::<f64>(&gpu);
}
