//! A kernel of 16 parameters (`cg_kernel::kernels::MAX_PARAMS`, the most
//! `#[kernel]` takes), launched through the typed API on the emulated T4:
//! `Args` takes a tuple of 16 host values, each reaching its parameter.

use cg_kernel::kernel;
use cg_kernel::kernels::MAX_PARAMS;
use cg_kernel::mem::{In, Out};
use cg_launcher::device::{EmulatedDevice, Gpu};

/// `sum[i]` is `x0[i] + 2 x1[i] + ... + 10 x9[i] + a b`, so that two
/// arguments passed in each other's place change it; `ks[i]` is `k`.
/// Emulator only: this test's program links no PTX.
///
/// # Safety
/// Every buffer holds `n` elements.
#[kernel(emulator)]
#[rustfmt::skip]
pub unsafe fn sixteen(
    x0: In<u32>, x1: In<u32>, x2: In<u32>, x3: In<u32>, x4: In<u32>, x5: In<u32>, x6: In<u32>, x7: In<u32>, x8: In<u32>, x9: In<u32>,
    sum: Out<u32>, ks: Out<u32>,
    n: usize, k: u32, a: u32, b: usize,
) {
    let i = cg_kernel::cg::this_grid().thread_rank();
    if i < n {
        // SAFETY: i < n, and this thread alone writes element i.
        unsafe {
            let weighted = x0.read(i) + 2 * x1.read(i) + 3 * x2.read(i) + 4 * x3.read(i) + 5 * x4.read(i)
                + 6 * x5.read(i) + 7 * x6.read(i) + 8 * x7.read(i) + 9 * x8.read(i) + 10 * x9.read(i);
            sum.write(i, weighted + a * b as u32);
            ks.write(i, k);
        }
    }
}

#[test]
fn a_kernel_of_sixteen_parameters_launches_with_sixteen_arguments() -> cg_launcher::error::Result<()> {
    assert_eq!(SIXTEEN.param_names().len(), MAX_PARAMS);
    let gpu = Gpu::emulated(EmulatedDevice::T4, Default::default());
    let n = 1000;
    // x_j[i] = 10 j + i % 7
    let host: Vec<Vec<u32>> = (0..10).map(|j| (0..n as u32).map(|i| 10 * j + i % 7).collect()).collect();
    let xs = host.iter().map(|x| gpu.upload(x)).collect::<cg_launcher::error::Result<Vec<_>>>()?;
    let mut sum = gpu.zeros::<u32>(n)?;
    let mut ks = gpu.zeros::<u32>(n)?;
    let (k, a, b) = (7, 3, 5);
    let kernel = gpu.kernel(&SIXTEEN)?;
    let v: Vec<_> = xs.iter().map(|x| x.slice(..)).collect();
    // SAFETY: every buffer holds n elements.
    unsafe { kernel.launch(4, 256, (&v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9], sum.slice_mut(..), ks.slice_mut(..), n, k, a, b))? };
    let (sum, ks) = (gpu.read(&sum)?, gpu.read(&ks)?);
    for i in 0..n {
        let expected: u32 = (0..10).map(|j| (j as u32 + 1) * host[j][i]).sum::<u32>() + a * b as u32;
        assert_eq!(sum[i], expected, "sum[{i}]");
    }
    assert!(ks.iter().all(|&v| v == k));
    Ok(())
}

/// Every kind of number a kernel parameter may be, each written back as its
/// bits (integers sign- or zero-extended to 64, floats by `to_bits`).
///
/// # Safety
/// `out` holds 11 elements.
#[kernel(emulator)]
#[rustfmt::skip]
pub unsafe fn every_number(
    out: Out<u64>, a: u8, b: i8, c: u16, d: i16, e: u32, f: i32, g: u64, h: i64, k: usize, x: f32, y: f64,
) {
    if cg_kernel::cg::this_grid().thread_rank() == 0 {
        let bits = [a as u64, b as i64 as u64, c as u64, d as i64 as u64, e as u64, f as i64 as u64, g, h as u64, k as u64, x.to_bits() as u64, y.to_bits()];
        for (i, v) in bits.into_iter().enumerate() {
            // SAFETY: 11 elements; one thread.
            unsafe { out.write(i, v) };
        }
    }
}

#[test]
fn a_scalar_parameter_of_every_number_type_reaches_the_kernel_as_passed() -> cg_launcher::error::Result<()> {
    let gpu = Gpu::emulated(EmulatedDevice::T4, Default::default());
    let mut out = gpu.zeros::<u64>(11)?;
    let kernel = gpu.kernel(&EVERY_NUMBER)?;
    let (x, y) = (0.1f32, -2.5e300f64);
    // SAFETY: 11 elements.
    unsafe {
        kernel.launch(
            1,
            32,
            (out.slice_mut(..), 200u8, -100i8, 60_000u16, -30_000i16, 4_000_000_000u32, -2_000_000_000i32, u64::MAX - 1, i64::MIN + 1, 7usize, x, y),
        )?
    };
    let expected = [
        200,
        -100i64 as u64,
        60_000,
        -30_000i64 as u64,
        4_000_000_000,
        -2_000_000_000i64 as u64,
        u64::MAX - 1,
        (i64::MIN + 1) as u64,
        7,
        x.to_bits() as u64,
        y.to_bits(),
    ];
    assert_eq!(gpu.read(&out)?, expected);
    Ok(())
}
