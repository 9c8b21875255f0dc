//! Atomics on the emulator (`atomicAdd` and the rest): exact values across
//! blocks with no grid barrier, and every misuse named with both lines: a
//! plain access racing an atomic (in a block, between blocks, in shared
//! memory), and a block-scoped atomic shared by two blocks.

use cg_emulator::{Fault, Options};
use cg_kernel::cg::{this_grid, this_thread_block};
use cg_kernel::kernel;
use cg_kernel::mem::{In, MemoryOrder, Out, Scope, dynamic_shared};
use cg_launcher::device::{EmulatedDevice, Gpu};
use cg_launcher::error::{Error, Result};

/// The line of this file that ends with `marker`, as `atomics.rs:LINE:`.
fn line_of(marker: &str) -> String {
    let source = include_str!("atomics.rs");
    let line = source.lines().position(|l| l.trim_end().ends_with(marker)).unwrap_or_else(|| panic!("no line ends with {marker}")) + 1;
    format!("atomics.rs:{line}:")
}

fn gpu() -> Gpu {
    Gpu::emulated(EmulatedDevice::T4, Options::default())
}

/// The fault of a launch that failed on the emulator.
fn fault(r: Result<()>) -> Fault {
    match r {
        Err(Error::Emulated { fault, .. }) => *fault,
        other => panic!("expected a fault, got {other:?}"),
    }
}

/// `count[0] += 1` and `sum[0] += i` by every thread `i` of the grid, with
/// no barrier of any kind; `tickets[i]` is the old count each thread saw.
///
/// # Safety
/// `count` and `sum` hold one element, `tickets` one per thread of the grid.
#[kernel(emulator)]
pub unsafe fn count_and_sum(count: Out<u32>, sum: Out<u64>, tickets: Out<u32>) {
    let i = this_grid().thread_rank();
    // SAFETY: element 0, touched only atomically; tickets[i] is this thread's.
    unsafe {
        tickets.write(i, count.atomic_add(0, 1));
        sum.atomic_add_explicit(0, i as u64, Scope::Device, MemoryOrder::AcqRel);
    }
}

#[test]
fn atomic_adds_across_blocks_without_a_grid_barrier_are_no_race_and_sum_right() -> Result<()> {
    for workers in [1, 2, 4] {
        let gpu = Gpu::emulated(EmulatedDevice::T4, Options { workers, ..Options::default() });
        let (blocks, threads) = (40, 128);
        let n = (blocks * threads) as usize;
        let (mut count, mut sum, mut tickets) = (gpu.zeros::<u32>(1)?, gpu.zeros::<u64>(1)?, gpu.uninit::<u32>(n)?);
        let kernel = gpu.kernel(&COUNT_AND_SUM)?;
        // SAFETY: one count, one sum, a ticket per thread.
        unsafe { kernel.launch(blocks, threads, (count.slice_mut(..), sum.slice_mut(..), tickets.slice_mut(..)))? };
        assert_eq!(gpu.read(&count)?, [n as u32], "{workers} workers");
        assert_eq!(gpu.read(&sum)?, [(n * (n - 1) / 2) as u64]);
        // Every thread drew a ticket no other drew: the adds were atomic.
        let mut t = gpu.read(&tickets)?;
        t.sort_unstable();
        assert!(t.iter().enumerate().all(|(k, &v)| v == k as u32), "{workers} workers: the tickets are 0..{n}");
    }
    Ok(())
}

/// `sum[0] += x[i]` and `sum64[0] += x[i]` for every element, atomically, from every block.
///
/// # Safety
/// `x` holds `n` floats; `sum` and `sum64` one each.
#[kernel(emulator)]
pub unsafe fn float_sums(x: In<f32>, sum: Out<f32>, sum64: Out<f64>, n: usize) {
    let grid = this_grid();
    let mut i = grid.thread_rank();
    while i < n {
        // SAFETY: i < n; the sums are touched only atomically.
        unsafe {
            let v = x.read(i);
            sum.atomic_add(0, v);
            sum64.atomic_add(0, v as f64);
        }
        i += grid.num_threads();
    }
}

#[test]
fn f32_and_f64_atomic_adds_sum_within_float_tolerance() -> Result<()> {
    let gpu = gpu();
    let n = 100_003;
    let xs = order_sensitive_input(n);
    let exact: f64 = xs.iter().map(|&v| v as f64).sum();
    let magnitude: f64 = xs.iter().map(|&v| (v as f64).abs()).sum();
    let x = gpu.upload(&xs)?;
    let (mut sum, mut sum64) = (gpu.zeros::<f32>(1)?, gpu.zeros::<f64>(1)?);
    let kernel = gpu.kernel(&FLOAT_SUMS)?;
    // SAFETY: x holds n floats, the sums one each.
    unsafe { kernel.launch(40, 256, (&x.slice(..), sum.slice_mut(..), sum64.slice_mut(..), n))? };
    let (s, s64) = (gpu.read(&sum)?[0] as f64, gpu.read(&sum64)?[0]);
    // n additions in some order, each rounding by at most half an ulp of the running sum.
    assert!((s - exact).abs() <= n as f64 * f32::EPSILON as f64 * magnitude, "f32: {s} against {exact}");
    assert!((s64 - exact).abs() <= n as f64 * f64::EPSILON * magnitude, "f64: {s64} against {exact}");
    Ok(())
}

/// Thread 0 writes `out[0]` while every thread adds 1 to it atomically,
/// with no barrier between: a data race.
///
/// # Safety
/// `out` holds one element.
#[kernel(emulator)]
pub unsafe fn plain_write_racing_an_atomic(out: Out<u32>) {
    let block = this_thread_block();
    if block.thread_rank() == 0 {
        // SAFETY: element 0. (Its race with the atomics is the point.)
        unsafe { out.write(0, 5) }; // the plain write
    }
    // SAFETY: element 0.
    unsafe { out.atomic_add(0, 1) }; // the atomic add
}

#[test]
fn a_plain_write_racing_an_atomic_add_is_named_with_both_lines() -> Result<()> {
    let gpu = gpu();
    let mut out = gpu.zeros::<u32>(1)?;
    let kernel = gpu.kernel(&PLAIN_WRITE_RACING_AN_ATOMIC)?;
    // SAFETY: one element.
    let f = fault(unsafe { kernel.launch(1, 64, (out.slice_mut(..),)) });
    let text = f.to_string();
    assert!(matches!(f, Fault::Race { .. }), "{text}");
    assert!(text.starts_with("data race on out[0]: thread 0 of block 0 (warp 0, lane 0) wrote it at "), "{text}");
    assert!(text.contains(&line_of("// the plain write")), "{text}");
    assert!(text.contains("thread 1 of block 0 (warp 0, lane 1) atomically updated it at atomic_add() at "), "{text}");
    assert!(text.contains(&line_of("// the atomic add")), "{text}");
    assert!(text.ends_with("with no barrier between"), "{text}");
    Ok(())
}

/// Block 0's thread 0 writes `out[0]` plainly; every other block adds to it
/// atomically (or, with `read`, block 0 reads it back): no grid barrier.
///
/// # Safety
/// `out` holds one element.
#[kernel(emulator)]
pub unsafe fn plain_access_racing_another_blocks_atomic(out: Out<u32>, read: u32) {
    let block = this_thread_block();
    let first = block.group_index().x == 0;
    if first && block.thread_rank() == 0 {
        if read == 1 {
            // SAFETY: element 0. (Its race with the other blocks' atomics is the point.)
            let _ = unsafe { out.read(0) }; // the plain read
        } else {
            // SAFETY: as above.
            unsafe { out.write(0, 5) }; // the other block's plain write
        }
    } else if !first {
        // SAFETY: element 0.
        unsafe { out.atomic_add(0, 1) }; // the other block's atomic
    }
}

#[test]
fn a_plain_access_in_one_block_and_an_atomic_in_another_race_and_are_named() -> Result<()> {
    for (read, access) in [(0, "wrote"), (1, "read")] {
        let gpu = gpu();
        let mut out = gpu.zeros::<u32>(1)?;
        let kernel = gpu.kernel(&PLAIN_ACCESS_RACING_ANOTHER_BLOCKS_ATOMIC)?;
        // SAFETY: one element.
        let f = fault(unsafe { kernel.launch(4, 32, (out.slice_mut(..), read)) });
        let text = f.to_string();
        assert!(matches!(f, Fault::BlockAtomicRace { other: 0, .. }), "{text}");
        assert!(
            text.contains(&format!("atomically updated it at atomic_add() at crates/cg-launcher/tests/{}", line_of("// the other block's atomic"))),
            "{text}"
        );
        let plain = if read == 1 { "// the plain read" } else { "// the other block's plain write" };
        assert!(text.contains(&format!("and block 0 {access} it at crates/cg-launcher/tests/{}", line_of(plain))), "{text}");
        assert!(text.contains("with no grid.sync() between"), "{text}");
    }
    Ok(())
}

/// Every block adds 1 to `out[0]` with a block-scoped atomic (`atomicAdd_block`).
///
/// # Safety
/// `out` holds one element per block with `own`, else one.
#[kernel(emulator)]
pub unsafe fn block_scoped_adds(out: Out<u32>, own: u32) {
    let b = this_thread_block().group_index().x as usize;
    let i = if own == 1 { b } else { 0 };
    // SAFETY: element i; touched only atomically.
    unsafe { out.atomic_add_explicit(i, 1, Scope::Block, MemoryOrder::Relaxed) }; // block scope
}

#[test]
fn a_block_scoped_atomic_that_two_blocks_share_is_named_and_one_per_block_is_fine() -> Result<()> {
    let gpu = gpu();
    let kernel = gpu.kernel(&BLOCK_SCOPED_ADDS)?;
    let mut shared = gpu.zeros::<u32>(1)?;
    // SAFETY: one element.
    let f = fault(unsafe { kernel.launch(3, 32, (shared.slice_mut(..), 0)) });
    let text = f.to_string();
    assert!(matches!(f, Fault::AtomicScope { .. }), "{text}");
    assert!(text.contains("atomically updated it with block scope at atomic_add_explicit() at crates/cg-launcher/tests/atomics.rs:"), "{text}");
    assert!(text.contains("use Scope::Device"), "{text}");
    let mut own = gpu.zeros::<u32>(3)?;
    // SAFETY: one element per block.
    unsafe { kernel.launch(3, 32, (own.slice_mut(..), 1))? };
    assert_eq!(gpu.read(&own)?, [32, 32, 32]);
    Ok(())
}

/// Shared memory: thread 0 writes the counter plainly while the others add
/// to it atomically, with no barrier between (`racy`), or after one.
///
/// # Safety
/// Launched with 4 bytes of shared memory (`FOUR_BYTES`); `out` holds one element.
#[kernel(emulator, shared_memory = four_bytes)]
pub unsafe fn shared_counter<const TILE: u32 = 32>(out: Out<u32>, racy: u32) {
    let block = this_thread_block();
    let counter = dynamic_shared::<u32>();
    if block.thread_rank() == 0 {
        // SAFETY: one element of shared memory.
        unsafe { counter.write(0, 0) }; // the shared plain write
    }
    if racy == 0 {
        block.sync();
    }
    // SAFETY: as above.
    unsafe { counter.atomic_add(0, 1) }; // the shared atomic
    block.sync();
    if block.thread_rank() == 0 {
        // SAFETY: out holds one element; after the barrier.
        unsafe { out.atomic_add(0, counter.read(0)) };
    }
}

/// 4 bytes of dynamic shared memory.
pub const fn four_bytes(_threads: u32, _tile: u32) -> u32 {
    4
}

#[test]
fn a_shared_memory_atomic_racing_a_plain_write_is_named_and_after_a_barrier_counts_right() -> Result<()> {
    let gpu = gpu();
    let kernel = gpu.kernel(&SHARED_COUNTER)?;
    let mut out = gpu.zeros::<u32>(1)?;
    // SAFETY: one element.
    unsafe { kernel.launch(5, 64, (out.slice_mut(..), 0))? };
    assert_eq!(gpu.read(&out)?, [5 * 64]);
    // SAFETY: one element.
    let f = fault(unsafe { kernel.launch(5, 64, (out.slice_mut(..), 1)) });
    let text = f.to_string();
    assert!(text.starts_with("data race on dynamic shared memory word 0 (bytes 0..4): thread 0 of block 0"), "{text}");
    assert!(text.contains(&line_of("// the shared plain write")) && text.contains(&line_of("// the shared atomic")), "{text}");
    Ok(())
}

/// `out[0] += 1` atomically into memory allocated uninitialized.
///
/// # Safety
/// `out` holds one element.
#[kernel(emulator)]
pub unsafe fn add_one(out: Out<u32>) {
    // SAFETY: element 0, touched only atomically.
    unsafe { out.atomic_add(0, 1) };
}

#[test]
fn an_atomic_on_memory_nothing_wrote_is_named_as_a_read_of_it() -> Result<()> {
    let gpu = gpu();
    let kernel = gpu.kernel(&ADD_ONE)?;
    let mut out = gpu.uninit::<u32>(1)?;
    // SAFETY: one element.
    let f = fault(unsafe { kernel.launch(1, 32, (out.slice_mut(..),)) });
    assert!(matches!(f, Fault::Uninitialized { index: 0, .. }), "{f}");
    gpu.fill(&mut out, 7)?;
    // SAFETY: one element.
    unsafe { kernel.launch(2, 32, (out.slice_mut(..),))? };
    assert_eq!(gpu.read(&out)?, [71]);
    Ok(())
}

/// Each integer atomic by every thread `r` of the grid on `out[0..8]`, the
/// old values of `atomic_exch` in `olds[r]` and of `atomic_cas` in
/// `olds[threads + r]`; `out[8]` is thread 0's plain write, then its own
/// atomic on it (ordered: one thread).
///
/// # Safety
/// `out` holds 9 elements, `olds` two per thread of the grid.
#[kernel(emulator)]
pub unsafe fn every_integer_atomic(out: Out<i64>, olds: Out<i64>) {
    let (r, threads) = (this_grid().thread_rank(), this_grid().num_threads());
    let v = r as i64 - 100;
    // SAFETY: 9 elements, touched only atomically but by thread 0's own write of out[8].
    unsafe {
        out.atomic_add(0, v);
        out.atomic_sub(1, v);
        out.atomic_min(2, v);
        out.atomic_max(3, v);
        olds.write(r, out.atomic_exch(4, v));
        olds.write(threads + r, out.atomic_cas(5, 1_000_000, v));
        out.atomic_and(6, !(1 << (r % 64)));
        out.atomic_or(7, 1 << (r % 64));
        if r == 0 {
            out.write(8, 40);
            out.atomic_xor(8, 2);
        }
    }
}

#[test]
fn every_integer_atomic_gives_the_cpus_answer() -> Result<()> {
    let gpu = gpu();
    let kernel = gpu.kernel(&EVERY_INTEGER_ATOMIC)?;
    let n = 8 * 64;
    let mut out = gpu.upload(&[0i64, 0, i64::MAX, i64::MIN, -1, 1_000_000, -1, 0, 0])?;
    let mut olds = gpu.zeros::<i64>(2 * n)?;
    // SAFETY: 9 elements, one old value per thread.
    unsafe { kernel.launch(8, 64, (out.slice_mut(..), olds.slice_mut(..)))? };
    let out = gpu.read(&out)?;
    let vs: Vec<i64> = (0..n as i64).map(|r| r - 100).collect();
    assert_eq!(out[0], vs.iter().sum::<i64>());
    assert_eq!(out[1], -vs.iter().sum::<i64>());
    assert_eq!((out[2], out[3]), (-100, n as i64 - 101));
    // One exchange chain: the old values and the last are the first and every value written.
    let olds = gpu.read(&olds)?;
    let mut chain = olds[..n].to_vec();
    chain.push(out[4]);
    chain.sort_unstable();
    let mut expected = vs.clone();
    expected.push(-1);
    expected.sort_unstable();
    assert_eq!(chain, expected);
    // One thread found the initial value and swapped in its own; every other found that.
    let winners: Vec<usize> = (0..n).filter(|&r| olds[n + r] == 1_000_000).collect();
    assert_eq!(winners.len(), 1, "{winners:?}");
    assert_eq!(out[5], vs[winners[0]]);
    assert!((0..n).filter(|&r| r != winners[0]).all(|r| olds[n + r] == out[5]));
    assert_eq!((out[6], out[7]), (0, -1));
    assert_eq!(out[8], 42);
    Ok(())
}

/// Values of both signs from 2^-10 to 2^4, whose float sum depends on the
/// order of the additions.
fn order_sensitive_input(n: usize) -> Vec<f32> {
    (0..n).map(|i| if i % 2 == 0 { 1.0 } else { -1.0 } * (1u32 << (i * 7 % 15)) as f32 / 1024.0 * (1.0 + (i % 97) as f32 / 97.0)).collect()
}
