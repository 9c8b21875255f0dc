//! Every algorithm on a CUDA GPU, against references on the CPU, up to
//! 2^24 elements. Needs a GPU: ignored unless run with `--ignored`.

mod common;

use cg_launcher::device::Gpu;

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_algorithm_matches_its_reference_on_the_gpu() {
    let gpu = Gpu::open(0).expect("a CUDA GPU");
    common::check_all(&gpu, &[0, 1, 3, 4_097, 40 * 4_096 + 3, (1 << 20) + 7, 1 << 22, (1 << 24) - 1]);
}
