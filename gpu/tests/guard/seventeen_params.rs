//! A kernel of 17 parameters: the error is at the 17th, and says the limit,
//! why, and what to do instead.
use gpu::kernel;
use gpu::mem::{In, Out};

/// # Safety
/// Each buffer holds `n` floats.
#[kernel]
#[rustfmt::skip]
pub unsafe fn seventeen(
    a: In<f32>, b: In<f32>, c: In<f32>, d: In<f32>, e: In<f32>, f: In<f32>, g: In<f32>, h: In<f32>,
    i: In<f32>, j: In<f32>, k: In<f32>, l: In<f32>, m: In<f32>, o: In<f32>, p: In<f32>, out: Out<f32>,
    n: usize,
) {
}

fn main() {}
