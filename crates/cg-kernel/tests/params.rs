//! A kernel of 16 parameters, the most `#[kernel]` takes
//! (`kernels::MAX_PARAMS`; a 17th is a compile error, `gpu/tests/guard/seventeen_params.rs`):
//! it defines, and each argument reaches its parameter on the emulator.

use cg_emulator::{Arg, Device, Launch, Options};
use cg_kernel::kernel;
use cg_kernel::kernels::{KernelDef, MAX_PARAMS, NoGridSync, Params};
use cg_kernel::mem::{In, Out};

type Sixteen = (In<u32>, In<u32>, In<u32>, In<u32>, In<u32>, In<u32>, In<u32>, In<u32>, Out<u32>, Out<u32>, Out<u64>, Out<i32>, usize, u32, u64, i32);

/// `sum[i]` is `x0[i] + 2 x1[i] + ... + 8 x7[i]`, so that two inputs passed
/// in each other's place change it; `ks`, `bigs` and `negs` get the numbers.
///
/// # Safety
/// Every buffer holds `n` elements.
#[kernel]
#[rustfmt::skip]
pub unsafe fn sixteen(
    x0: In<u32>, x1: In<u32>, x2: In<u32>, x3: In<u32>, x4: In<u32>, x5: In<u32>, x6: In<u32>, x7: In<u32>,
    sum: Out<u32>, ks: Out<u32>, bigs: Out<u64>, negs: Out<i32>,
    n: usize, k: u32, big: u64, neg: i32,
) {
    let i = cg_kernel::cg::this_grid().thread_rank();
    if i < n {
        // SAFETY: i < n, and this thread alone writes element i.
        unsafe {
            let weighted = x0.read(i) + 2 * x1.read(i) + 3 * x2.read(i) + 4 * x3.read(i) + 5 * x4.read(i) + 6 * x5.read(i) + 7 * x6.read(i) + 8 * x7.read(i);
            sum.write(i, weighted);
            ks.write(i, k);
            bigs.write(i, big);
            negs.write(i, neg);
        }
    }
}

#[test]
fn a_kernel_of_sixteen_parameters_defines_with_all_of_them() {
    let def: KernelDef<Sixteen, NoGridSync> = SIXTEEN;
    assert_eq!(def.param_names().len(), MAX_PARAMS);
    assert_eq!(def.param_names()[8..12], ["sum", "ks", "bigs", "negs"]);
    assert_eq!(def.param_names()[15], "neg");
}

#[test]
fn a_kernel_of_sixteen_parameters_gets_each_argument_in_its_place_on_the_emulator() {
    const DEV: Device = Device {
        sms: 2,
        threads_per_sm: 256,
        blocks_per_sm: 4,
        shared_bytes_per_sm: 48 * 1024,
        max_shared_per_block: 48 * 1024,
        max_threads_per_block: 1024,
        registers_per_sm: 65536,
        clusters: None,
    };
    const NAMES: [&str; 8] = ["x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7"];
    let n = 300;
    // x_j[i] = 10 j + i % 7
    let xs: Vec<Vec<u32>> = (0..8).map(|j| (0..n as u32).map(|i| 10 * j + i % 7).collect()).collect();
    let (mut sum, mut ks) = (vec![u32::MAX; n], vec![u32::MAX; n]);
    let (mut bigs, mut negs) = (vec![u64::MAX; n], vec![i32::MAX; n]);
    let (k, big, neg) = (7u32, 5_000_000_000u64, -3i32);
    let mut args: Vec<Arg> = xs.iter().zip(NAMES).map(|(x, name)| Arg::In { name, address: x.as_ptr() as usize, len: n, elem: 4 }).collect();
    args.extend([
        Arg::Out { name: "sum", address: sum.as_mut_ptr() as usize, len: n, elem: 4, slot: 0 },
        Arg::Out { name: "ks", address: ks.as_mut_ptr() as usize, len: n, elem: 4, slot: 1 },
        Arg::Out { name: "bigs", address: bigs.as_mut_ptr() as usize, len: n, elem: 8, slot: 2 },
        Arg::Out { name: "negs", address: negs.as_mut_ptr() as usize, len: n, elem: 4, slot: 3 },
        Arg::Value(n as u64),
        Arg::Value(k as u64),
        Arg::Value(big),
        Arg::Value(neg as i64 as u64),
    ]);
    assert_eq!(args.len(), MAX_PARAMS);
    let entry = SIXTEEN.entry();
    // SAFETY: one argument per parameter, of its kind, over live vectors of n elements.
    let f = move |a: &[Arg]| unsafe { Sixteen::call(entry, a) };
    let (grid, threads) = (5, 64);
    let launch = Launch {
        kernel: SIXTEEN.name(),
        grid,
        threads,
        shared_bytes: 0,
        shared_tail: 0,
        registers_per_thread: None,
        cooperative: false,
        grid_sync: false,
        cluster: None,
        cluster_kernel: false,
        args: &args,
        entry: &f,
        trace: None,
    };
    // SAFETY: every buffer is live, aligned, apart from the others and
    // untouched during the launch, and n elements long.
    unsafe { DEV.launch(&launch, &Options::default()) }.unwrap();
    for i in 0..n {
        let expected: u32 = (0..8).map(|j| (j as u32 + 1) * xs[j][i]).sum();
        assert_eq!(sum[i], expected, "sum[{i}]");
    }
    assert!(ks.iter().all(|&v| v == k) && bigs.iter().all(|&v| v == big) && negs.iter().all(|&v| v == neg));
}
