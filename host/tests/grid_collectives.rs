//! The grid collectives inside one cooperative kernel (`GridGroup::reduce`,
//! the scans, `select`, `histogram_even`; kernels in
//! `gpu/src/kernels/grid_collectives.rs`): every thread's every result
//! against a CPU model of the library's order, bit for bit (floats too), on
//! the emulated T4 and H200 at grids from one block to the cooperative
//! ceiling, with several launches in flight, and the mistakes the emulator
//! names. The same checks on a GPU are marked `#[ignore]`: run them with
//! `--include-ignored` on a machine with one.

mod collectives_case;
use collectives_case::{Draw, Elem, Op, block_model, inputs};
use gpu::emu::{Device, Options};
use gpu::kernels::grid_collectives::{self as k, GRID_ITEM_VALUES, GRID_ITEMS, GRID_VALUES_PER_OP};
use gpu::kernels::{GridSync, KernelDef};
use gpu::mem::{In, Out};
use gpu_ptx as _;
use host::device::Gpu;

fn t4() -> Gpu {
    Gpu::emulated(Device::T4, Options::default())
}

fn h200() -> Gpu {
    Gpu::emulated(Device::H200, Options::default())
}

fn gpu() -> Gpu {
    Gpu::open(0).expect("a CUDA GPU")
}

/// An element type with a grid-collectives kernel, and the operators it takes, in its order.
trait GridElem: Elem {
    const OPS: &'static [Op];
    fn def() -> KernelDef<(In<Self>, Out<Self>), GridSync>;
}

impl GridElem for u32 {
    const OPS: &'static [Op] = &[Op::Plus, Op::Less, Op::Greater, Op::BitAnd, Op::BitOr, Op::BitXor];
    fn def() -> KernelDef<(In<u32>, Out<u32>), GridSync> {
        k::GRID_COLLECTIVES_U32
    }
}
impl GridElem for i64 {
    const OPS: &'static [Op] = &[Op::Plus, Op::Less, Op::Greater, Op::BitXor];
    fn def() -> KernelDef<(In<i64>, Out<i64>), GridSync> {
        k::GRID_COLLECTIVES_I64
    }
}
impl GridElem for f32 {
    const OPS: &'static [Op] = &[Op::Plus, Op::Less, Op::Greater];
    fn def() -> KernelDef<(In<f32>, Out<f32>), GridSync> {
        k::GRID_COLLECTIVES_F32
    }
}
impl GridElem for f64 {
    const OPS: &'static [Op] = &[Op::Plus, Op::Greater];
    fn def() -> KernelDef<(In<f64>, Out<f64>), GridSync> {
        k::GRID_COLLECTIVES_F64
    }
}

// ---- the model: the library's order ----

/// `acc` of every thread of a block combined as the library's last block
/// stage does: each warp's butterfly, then each warp's butterfly over the
/// warps' totals (what `block_model`'s reduce computes, on tiles of 32).
fn all_of_block<T: Elem>(op: Op, accs: &[T]) -> T {
    block_model(op, 32, accs).reduce[0]
}

/// Words `0..end` folded as the library's `combine_words` does: thread `t`
/// takes words `t, t + threads, ...` from the identity, then the block.
fn combine_words<T: Elem>(op: Op, words: &[T], end: usize, threads: usize) -> T {
    let accs: Vec<T> = (0..threads)
        .map(|t| {
            let mut a = T::identity(op);
            let mut i = t;
            while i < end {
                a = T::combine(op, a, words[i]);
                i += threads;
            }
            a
        })
        .collect();
    all_of_block(op, &accs)
}

/// The grid's reduce of one value per thread, as every thread gets it.
fn reduce_model<T: Elem>(op: Op, vs: &[T], threads: usize) -> T {
    let words: Vec<T> = vs.chunks(threads).map(|b| all_of_block(op, b)).collect();
    combine_words(op, &words, words.len(), threads)
}

/// The grid's exclusive scan of one value per thread.
fn exclusive_model<T: Elem>(op: Op, vs: &[T], threads: usize) -> Vec<T> {
    let scans: Vec<_> = vs.chunks(threads).map(|b| block_model(op, 32, b)).collect();
    let words: Vec<T> = scans.iter().map(|s| s.total).collect();
    let mut out = Vec::with_capacity(vs.len());
    for (b, s) in scans.iter().enumerate() {
        let before = combine_words(op, &words, b, threads);
        out.extend(s.exclusive.iter().map(|&e| T::combine(op, before, e)));
    }
    out
}

fn fold<T: Elem>(op: Op, items: &[T]) -> T {
    items.iter().fold(T::identity(op), |a, &x| T::combine(op, a, x))
}

/// Every thread's results, in the kernel's order: per operator the reduce,
/// the inclusive and the exclusive scan; then `reduce_items` and the two
/// items scans (`Plus`).
fn expected<T: GridElem>(xs: &[T], n: usize, threads: usize) -> Vec<T> {
    let (vs, items) = xs.split_at(n);
    let per_thread = T::OPS.len() * GRID_VALUES_PER_OP + GRID_ITEM_VALUES;
    let mut out = vec![T::identity(Op::Plus); n * per_thread];
    for (oi, &op) in T::OPS.iter().enumerate() {
        let r = reduce_model(op, vs, threads);
        let e = exclusive_model(op, vs, threads);
        for t in 0..n {
            let at = t * per_thread + oi * GRID_VALUES_PER_OP;
            out[at] = r;
            out[at + 1] = T::combine(op, e[t], vs[t]);
            out[at + 2] = e[t];
        }
    }
    let folds: Vec<T> = items.chunks(GRID_ITEMS).map(|c| fold(Op::Plus, c)).collect();
    let r = reduce_model(Op::Plus, &folds, threads);
    let e = exclusive_model(Op::Plus, &folds, threads);
    for t in 0..n {
        let at = t * per_thread + T::OPS.len() * GRID_VALUES_PER_OP;
        out[at] = r;
        let mut acc = e[t];
        for j in 0..GRID_ITEMS {
            out[at + 1 + GRID_ITEMS + j] = acc;
            acc = T::combine(Op::Plus, acc, items[t * GRID_ITEMS + j]);
            out[at + 1 + j] = acc;
        }
    }
    out
}

/// Runs `T`'s kernel on `blocks` of `threads` and checks every thread's
/// every result, bit for bit.
fn check<T: GridElem>(gpu: &Gpu, blocks: u32, threads: u32, draw: Draw, seed: u64) {
    let n = (blocks * threads) as usize;
    let xs = inputs::<T>(seed, n * (1 + GRID_ITEMS), draw);
    let per_thread = T::OPS.len() * GRID_VALUES_PER_OP + GRID_ITEM_VALUES;
    let kernel = gpu.cooperative_kernel(&T::def()).unwrap();
    let launch = kernel.configure(blocks, threads).unwrap();
    let x = gpu.upload(&xs).unwrap();
    let mut out = gpu.zeros::<T>(n * per_thread).unwrap();
    // SAFETY: the values and items the kernel reads, and every thread's results.
    unsafe { launch.launch((&x.slice(..), out.slice_mut(..))).unwrap() };
    let got = gpu.read(&out).unwrap();
    let want = expected(&xs, n, threads as usize);
    for t in 0..n {
        for v in 0..per_thread {
            let (g, w) = (got[t * per_thread + v], want[t * per_thread + v]);
            let what = match v / GRID_VALUES_PER_OP {
                o if o < T::OPS.len() => format!("{:?} {}", T::OPS[o], ["reduce", "inclusive_scan", "exclusive_scan"][v % GRID_VALUES_PER_OP]),
                _ => format!("items value {}", v - T::OPS.len() * GRID_VALUES_PER_OP),
            };
            assert!(
                g.bits() == w.bits(),
                "{} {what}, {blocks} blocks of {threads}, thread {t} (block {}): got {g:?}, the model {w:?}",
                T::NAME,
                t / threads as usize
            );
        }
    }
}

fn ladder<T: GridElem>(gpu: &Gpu) {
    for (blocks, threads, seed) in [(1, 32, 1), (1, 256, 2), (2, 64, 3), (3, 96, 4), (7, 128, 5), (33, 32, 6), (40, 64, 7)] {
        check::<T>(gpu, blocks, threads, Draw::Random, seed);
    }
    check::<T>(gpu, 5, 160, Draw::Pool, 8);
}

#[test]
fn grid_reduce_and_scans_of_u32_match_the_model_for_every_operator_on_the_emulator() {
    ladder::<u32>(&t4());
}

#[test]
fn grid_reduce_and_scans_of_i64_match_the_model_for_every_operator_on_the_emulator() {
    ladder::<i64>(&t4());
}

#[test]
fn grid_reduce_and_scans_of_f32_and_f64_match_the_model_bit_for_bit_on_the_emulator() {
    ladder::<f32>(&t4());
    ladder::<f64>(&t4());
}

#[test]
fn the_model_agrees_with_a_plain_fold_on_integers() {
    let xs: Vec<u32> = inputs(9, 1024, Draw::Random);
    for op in <u32 as GridElem>::OPS {
        assert_eq!(reduce_model(*op, &xs, 128), fold(*op, &xs), "{op:?}");
        let e = exclusive_model(*op, &xs, 128);
        for t in 0..xs.len() {
            assert_eq!(e[t], fold(*op, &xs[..t]), "{op:?} at {t}");
        }
    }
}

/// Five sums of `f64` in one `reduce_array`, each as `reduce` would give it.
fn check_array(gpu: &Gpu, blocks: u32, threads: u32, seed: u64) {
    let n = (blocks * threads) as usize;
    let xs: Vec<f64> = inputs(seed, n * k::GRID_ARRAY, Draw::Random);
    let kernel = gpu.cooperative_kernel(&k::GRID_REDUCE_ARRAY).unwrap();
    let x = gpu.upload(&xs).unwrap();
    let mut out = gpu.zeros::<f64>(n * k::GRID_ARRAY).unwrap();
    // SAFETY: GRID_ARRAY values per thread, in and out.
    unsafe { kernel.configure(blocks, threads).unwrap().launch((&x.slice(..), out.slice_mut(..))).unwrap() };
    let got = gpu.read(&out).unwrap();
    for v in 0..k::GRID_ARRAY {
        let column: Vec<f64> = xs.iter().skip(v).step_by(k::GRID_ARRAY).copied().collect();
        let want = reduce_model(Op::Plus, &column, threads as usize);
        for t in 0..n {
            assert_eq!(got[t * k::GRID_ARRAY + v].to_bits(), want.to_bits(), "{blocks} x {threads}: value {v}, thread {t}");
        }
    }
}

#[test]
fn grid_reduce_array_gives_each_value_the_reduce_of_its_own_bit_for_bit_on_the_emulator() {
    let gpu = t4();
    for (blocks, threads, seed) in [(1, 32, 1), (5, 96, 2), (40, 64, 3)] {
        check_array(&gpu, blocks, threads, seed);
    }
}

// ---- select and the histogram ----

/// Runs the select kernel and checks the kept values (packed, in order)
/// and every thread's two counts.
fn check_select(gpu: &Gpu, blocks: u32, threads: u32, below: u32, seed: u64) {
    let n = (blocks * threads) as usize;
    let mut rng = collectives_case::Rng(seed);
    let xs: Vec<u32> = (0..n * (1 + GRID_ITEMS)).map(|_| rng.below(1000) as u32).collect();
    let kernel = gpu.cooperative_kernel(&k::GRID_SELECT).unwrap();
    let launch = kernel.configure(blocks, threads).unwrap();
    let x = gpu.upload(&xs).unwrap();
    let mut kept = gpu.upload(&vec![u32::MAX; n]).unwrap();
    let mut kept_items = gpu.upload(&vec![u32::MAX; n * GRID_ITEMS]).unwrap();
    let mut counts = gpu.zeros::<u32>(2 * n).unwrap();
    // SAFETY: the kernel's buffers, each as long as it writes.
    unsafe { launch.launch((&x.slice(..), below, kept.slice_mut(..), kept_items.slice_mut(..), counts.slice_mut(..))).unwrap() };
    let (want, want_items): (Vec<u32>, Vec<u32>) =
        (xs[..n].iter().copied().filter(|&v| v < below).collect(), xs[n..].iter().copied().filter(|&v| v < below).collect());
    let (kept, kept_items, counts) = (gpu.read(&kept).unwrap(), gpu.read(&kept_items).unwrap(), gpu.read(&counts).unwrap());
    assert_eq!(kept[..want.len()], want, "{blocks} x {threads}: the kept values, in order");
    assert!(kept[want.len()..].iter().all(|&v| v == u32::MAX), "{blocks} x {threads}: nothing written past the count");
    assert_eq!(kept_items[..want_items.len()], want_items, "{blocks} x {threads}: the kept items, in order");
    for t in 0..n {
        assert_eq!(counts[2 * t..2 * t + 2], [want.len() as u32, want_items.len() as u32], "{blocks} x {threads}: thread {t}'s counts");
    }
}

#[test]
fn grid_select_packs_the_kept_values_in_order_and_tells_every_thread_the_count_on_the_emulator() {
    let gpu = t4();
    for (blocks, threads, below, seed) in [(1, 32, 500, 1), (3, 96, 100, 2), (17, 64, 900, 3), (4, 128, 0, 4), (4, 128, 1000, 5)] {
        check_select(&gpu, blocks, threads, below, seed);
    }
}

/// Runs the histogram kernel and checks the bins and what each thread read back.
fn check_histogram(gpu: &Gpu, blocks: u32, threads: u32, num_bins: u32, seed: u64) {
    let n = (blocks * threads) as usize;
    let mut rng = collectives_case::Rng(seed);
    // Samples in [-1, 11): some below the range [0, 10), some above; a NaN.
    let mut xs: Vec<f32> = (0..2 * n).map(|_| rng.below(12_000) as f32 / 1000.0 - 1.0).collect();
    xs[0] = f32::NAN;
    let (lower, upper) = (0.0f32, 10.0f32);
    let kernel = gpu.cooperative_kernel(&k::GRID_HISTOGRAM).unwrap();
    let launch = kernel.configure(blocks, threads).unwrap();
    let x = gpu.upload(&xs).unwrap();
    let mut bins = gpu.upload(&vec![0xdead_beef_u32; num_bins as usize]).unwrap();
    let mut seen = gpu.zeros::<u32>(n).unwrap();
    // SAFETY: two samples per thread, the bins, one per thread.
    unsafe { launch.launch((&x.slice(..), bins.slice_mut(..), num_bins, lower, upper, seen.slice_mut(..))).unwrap() };
    let mut want = vec![0u32; num_bins as usize];
    for (i, &s) in xs.iter().enumerate() {
        // The second sample of odd ranks is None.
        if i % 2 == 1 && (i / 2) % 2 == 1 {
            continue;
        }
        if s >= lower && s < upper {
            let b = (((s - lower) * (num_bins as f32 / (upper - lower))) as u32).min(num_bins - 1);
            want[b as usize] += 1;
        }
    }
    let (bins, seen) = (gpu.read(&bins).unwrap(), gpu.read(&seen).unwrap());
    assert_eq!(bins, want, "{blocks} x {threads}, {num_bins} bins");
    for t in 0..n {
        assert_eq!(seen[t], want[t % num_bins as usize], "{blocks} x {threads}: thread {t} read bin {} back", t % num_bins as usize);
    }
}

#[test]
fn grid_histogram_counts_every_sample_and_every_thread_sees_the_counts_on_the_emulator() {
    let gpu = t4();
    for (blocks, threads, bins, seed) in [(1, 32, 1, 1), (3, 64, 10, 2), (9, 96, 7, 3), (2, 256, 300, 4)] {
        check_histogram(&gpu, blocks, threads, bins, seed);
    }
}

// ---- at the ceiling, and launches in flight ----

/// The grid's sum and exclusive scan of one `u32` per thread at the
/// kernel's cooperative ceiling (every block's word read), and one block
/// more refused.
fn at_the_ceiling(gpu: &Gpu, threads: u32) {
    let kernel = gpu.cooperative_kernel(&k::GRID_SUM_AND_OFFSETS).unwrap();
    let blocks = kernel.limits(threads).unwrap().capacity();
    let n = (blocks * threads) as usize;
    println!("{}: {blocks} blocks of {threads}", gpu.info.name);
    let xs: Vec<u32> = inputs(blocks as u64, n, Draw::Random).into_iter().map(|v: u32| v >> 12).collect();
    let x = gpu.upload(&xs).unwrap();
    let mut out = gpu.zeros::<u32>(2 * n).unwrap();
    // SAFETY: one value per thread, two results per thread.
    unsafe { kernel.configure(blocks, threads).unwrap().launch((&x.slice(..), out.slice_mut(..))).unwrap() };
    let out = gpu.read(&out).unwrap();
    let total = xs.iter().fold(0u32, |a, &v| a.wrapping_add(v));
    let mut before = 0u32;
    for t in 0..n {
        assert_eq!(out[2 * t..2 * t + 2], [total, before], "{blocks} blocks of {threads}: thread {t}");
        before = before.wrapping_add(xs[t]);
    }
    assert!(kernel.configure(blocks + 1, threads).is_err(), "one block more is refused");
}

#[test]
fn grid_collectives_hold_at_the_emulated_h200s_cooperative_ceiling() {
    // 256 threads: 1,056 blocks; 32 threads: 4,224.
    for threads in [256, 32] {
        at_the_ceiling(&h200(), threads);
    }
}

/// Two launches in flight together (branches of `in_parallel`), each with
/// its own words: each gets its own grid's answers.
fn two_in_flight(gpu: &Gpu, blocks: u32, threads: u32) {
    let kernel = gpu.cooperative_kernel(&k::GRID_COLLECTIVES_F32).unwrap();
    let launch = kernel.configure(blocks, threads).unwrap();
    let n = (blocks * threads) as usize;
    let per_thread = <f32 as GridElem>::OPS.len() * GRID_VALUES_PER_OP + GRID_ITEM_VALUES;
    let xs: Vec<Vec<f32>> = (0..2).map(|s| inputs::<f32>(100 + s, n * (1 + GRID_ITEMS), Draw::Random)).collect();
    let x: Vec<_> = xs.iter().map(|v| gpu.upload(v).unwrap()).collect();
    let mut outs: Vec<_> = (0..2).map(|_| gpu.zeros::<f32>(n * per_thread).unwrap()).collect();
    let (a, b) = outs.split_at_mut(1);
    let mut outs_by_branch = [&mut a[0], &mut b[0]];
    gpu.in_parallel(2, &mut |i| {
        // SAFETY: each branch its own input and output.
        unsafe { launch.launch((&x[i].slice(..), outs_by_branch[i].slice_mut(..))) }
    })
    .unwrap();
    for i in 0..2 {
        let got = gpu.read(&outs[i]).unwrap();
        let want = expected(&xs[i], n, threads as usize);
        assert!(got.iter().zip(&want).all(|(g, w)| g.to_bits() == w.to_bits()), "launch {i} of two in flight");
    }
}

#[test]
fn two_launches_in_flight_each_get_their_own_grids_answers_on_the_emulator() {
    two_in_flight(&t4(), 6, 64);
}

// ---- the mistakes the emulator names ----

fn fault_of(def: &KernelDef<(Out<f32>,), GridSync>, blocks: u32, threads: u32) -> String {
    let gpu = t4();
    let kernel = gpu.cooperative_kernel(def).unwrap();
    let launch = kernel.configure(blocks, threads).unwrap();
    let mut out = gpu.zeros::<f32>((blocks * threads) as usize).unwrap();
    // SAFETY: one float per thread, more than the kernels write.
    let e = unsafe { launch.launch((out.slice_mut(..),)) }.and_then(|_| gpu.finish()).expect_err("the mistake is named");
    e.to_string()
}

#[test]
fn a_grid_reduce_some_blocks_skip_is_named_with_its_line() {
    let e = fault_of(&k::GRID_REDUCE_IN_SOME_BLOCKS, 4, 64);
    println!("{e}");
    assert!(e.contains("grid.reduce::<f32, Plus>() at gpu/src/kernels/grid_collectives.rs:"), "{e}");
    assert!(e.contains("2 of 4 blocks reached") && e.contains("exited without it"), "{e}");
}

#[test]
fn a_grid_reduce_that_meets_a_grid_sync_is_named_with_both_lines() {
    let e = fault_of(&k::GRID_REDUCE_AGAINST_GRID_SYNC, 4, 64);
    println!("{e}");
    assert!(e.contains("grid.reduce::<f32, Plus>() at gpu/src/kernels/grid_collectives.rs:"), "{e}");
    assert!(e.contains("grid.sync() at gpu/src/kernels/grid_collectives.rs:"), "{e}");
    assert!(e.contains("every block must make the same grid collectives"), "{e}");
}

#[test]
fn a_grid_reduce_with_another_operator_in_some_blocks_is_named() {
    let e = fault_of(&k::GRID_REDUCE_WITH_OTHER_OPERATORS, 3, 64);
    println!("{e}");
    assert!(e.contains("grid.reduce::<f32, Plus>()") && e.contains("grid.reduce::<f32, Greater>()"), "{e}");
}

#[test]
fn two_operators_of_one_name_from_two_modules_are_told_apart() {
    let gpu = t4();
    let kernel = gpu.cooperative_kernel(&k::GRID_REDUCE_WITH_TWO_OPS_OF_ONE_NAME).unwrap();
    let mut out = gpu.zeros::<u32>(3).unwrap();
    // SAFETY: one element per block.
    let e = unsafe { kernel.configure(3, 64).unwrap().launch((out.slice_mut(..),)) }.and_then(|_| gpu.finish()).expect_err("named").to_string();
    println!("{e}");
    assert!(e.contains("first::Op") && e.contains("second::Op"), "{e}");
}

#[test]
fn one_collective_written_in_two_branches_that_every_thread_chooses_between_is_not_a_mistake() {
    let gpu = t4();
    let kernel = gpu.cooperative_kernel(&k::GRID_REDUCE_FROM_TWO_BRANCHES).unwrap();
    let mut out = gpu.zeros::<u32>(4 * 64).unwrap();
    // SAFETY: one element per thread.
    unsafe { kernel.configure(4, 64).unwrap().launch((out.slice_mut(..),)).unwrap() };
    assert!(gpu.read(&out).unwrap().iter().all(|&t| t == 256));
}

#[test]
fn a_grid_select_of_other_item_counts_in_some_blocks_is_named() {
    let gpu = t4();
    let kernel = gpu.cooperative_kernel(&k::GRID_SELECT_ITEMS_OF_OTHER_SIZES).unwrap();
    let launch = kernel.configure(3, 64).unwrap();
    let mut out = gpu.zeros::<u32>(3).unwrap();
    // SAFETY: one count per block.
    let e = unsafe { launch.launch((out.slice_mut(..),)) }.and_then(|_| gpu.finish()).expect_err("the mistake is named").to_string();
    println!("{e}");
    assert!(e.contains("grid.select_items::<2>()") && e.contains("grid.select_items::<3>()"), "{e}");
}

#[test]
fn a_grid_reduce_half_the_threads_of_a_block_skip_is_named() {
    let e = fault_of(&k::GRID_REDUCE_IN_HALF_A_BLOCK, 2, 64);
    println!("{e}");
    assert!(e.contains("gpu/src/kernels/grid_collectives.rs:"), "{e}");
}

// ---- the same on a GPU ----

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn grid_reduce_and_scans_match_the_model_bit_for_bit_on_the_gpu() {
    let gpu = gpu();
    ladder::<u32>(&gpu);
    ladder::<i64>(&gpu);
    ladder::<f32>(&gpu);
    ladder::<f64>(&gpu);
    for (blocks, threads) in [(132, 256), (264, 1024), (500, 96)] {
        check::<f32>(&gpu, blocks, threads, Draw::Random, blocks as u64);
        check::<u32>(&gpu, blocks, threads, Draw::Pool, threads as u64);
        check_array(&gpu, blocks, threads, 7);
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn grid_select_and_histogram_are_right_on_the_gpu() {
    let gpu = gpu();
    for (blocks, threads, below, seed) in [(1, 32, 500, 1), (132, 256, 300, 2), (1000, 64, 999, 3)] {
        check_select(&gpu, blocks, threads, below, seed);
    }
    for (blocks, threads, bins, seed) in [(1, 32, 1, 1), (132, 256, 10, 2), (264, 128, 300, 3)] {
        check_histogram(&gpu, blocks, threads, bins, seed);
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn grid_collectives_hold_at_the_cooperative_ceiling_on_the_gpu_on_either_barrier() {
    let gpu = gpu();
    // 256 threads: the single word; 32 threads: above 960 blocks, the watched barrier.
    for threads in [256, 32, 1024] {
        at_the_ceiling(&gpu, threads);
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn two_launches_in_flight_each_get_their_own_grids_answers_on_the_gpu() {
    let gpu = gpu();
    for _ in 0..20 {
        two_in_flight(&gpu, 60, 256);
    }
}
