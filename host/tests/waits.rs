//! Atomic loads and stores with an order and a scope, the collectives of a
//! coalesced group, and the warp-aggregated atomic (`gpu/src/kernels/waits.rs`),
//! on the emulated T4 and on a GPU: the same kernels and checks, the GPU's
//! marked `#[ignore]` so that a run without one lists them by name. Then, on
//! the emulator, the mistakes they guard against, each named.

use cg_emulator::{Device, Fault, Options};
use cg_kernel::cg::this_thread_block;
use cg_kernel::kernel;
use cg_kernel::mem::{Out, Scope, dynamic_shared};
use cg_launcher::error::Error;
use gpu::kernels::waits::{CHAINED_TILES, COALESCED_COLLECTIVES, COALESCED_VALUES, PUBLISHED, SHARED_FLAG_HANDOFF};
use gpu_ptx as _;
use host::device::Gpu;

type Result<T> = cg_launcher::error::Result<T>;

fn t4() -> Gpu {
    Gpu::emulated(Device::T4, Options::default())
}

fn gpu() -> Gpu {
    Gpu::open(0).expect("an NVIDIA GPU")
}

/// `blocks` blocks chained by acquire loads and release stores: block `k`
/// in ticket order holds `1 + 2 + ... + (k + 1)`, and every flag is set.
fn the_chain_adds_up(gpu: &Gpu, blocks: u32, threads: u32) -> Result<()> {
    let n = blocks as usize;
    let mut ticket = gpu.zeros::<u32>(1)?;
    let mut flags = gpu.zeros::<u64>(n)?;
    let mut totals = gpu.zeros::<u64>(n)?;
    let kernel = gpu.kernel(&CHAINED_TILES)?;
    // SAFETY: one ticket, one flag and one total per block, zeroed.
    unsafe { kernel.launch(blocks, threads, (ticket.slice_mut(..), flags.slice_mut(..), totals.slice_mut(..)))? };
    let expected: Vec<u64> = (1..=n as u64).map(|k| k * (k + 1) / 2).collect();
    assert_eq!(gpu.read(&totals)?, expected, "{blocks} blocks of {threads}");
    assert!(gpu.read(&flags)?.iter().zip(&expected).all(|(&f, &e)| f == PUBLISHED | e));
    assert_eq!(gpu.read(&ticket)?, [blocks]);
    Ok(())
}

/// Warp 0 waits for the block's last thread through a shared flag, in
/// every block.
fn the_shared_flag_is_handed_over(gpu: &Gpu, blocks: u32, threads: u32) -> Result<()> {
    let mut out = gpu.zeros::<u32>(blocks as usize)?;
    let kernel = gpu.kernel(&SHARED_FLAG_HANDOFF)?;
    // SAFETY: one u32 per block.
    unsafe { kernel.launch(blocks, threads, (out.slice_mut(..),))? };
    assert_eq!(gpu.read(&out)?, (0..blocks).map(|b| 7 + b).collect::<Vec<_>>());
    Ok(())
}

/// The lanes of `pattern`, as a list.
fn lanes(pattern: u32) -> Vec<u32> {
    (0..32).filter(|l| pattern & (1 << l) != 0).collect()
}

/// Every collective of a coalesced group against the CPU's answer, for
/// each pattern of lanes; the aggregated atomics' returns checked as a
/// sequence of adds in some order.
fn coalesced_collectives_match_the_cpu(gpu: &Gpu, blocks: u32, threads: u32) -> Result<()> {
    let n = (blocks * threads) as usize;
    let kernel = gpu.kernel(&COALESCED_COLLECTIVES)?;
    for pattern in [u32::MAX, 1, 0x8000_0000, 0xaaaa_aaaa, 0x0f0f_00f1, 0x8000_0003] {
        let mut out = gpu.zeros::<u32>(COALESCED_VALUES * n)?;
        let mut olds = gpu.zeros::<u32>(n)?;
        let mut counter = gpu.zeros::<u32>(1)?;
        let mut bins = gpu.zeros::<u32>(3)?;
        // SAFETY: COALESCED_VALUES and one per thread, one counter and three bins, zeroed.
        unsafe { kernel.launch(blocks, threads, (out.slice_mut(..), olds.slice_mut(..), counter.slice_mut(..), bins.slice_mut(..), pattern))? };
        let (out, olds) = (gpu.read(&out)?, gpu.read(&olds)?);
        let group = lanes(pattern);
        let size = group.len() as u32;
        let v = |lane: u32| 100 + lane;
        let mut slots = Vec::new();
        for r in 0..n {
            let lane = (r % threads as usize % 32) as u32;
            let row = &out[COALESCED_VALUES * r..COALESCED_VALUES * (r + 1)];
            if pattern & (1 << lane) == 0 {
                assert!(row.iter().all(|&x| x == u32::MAX) && olds[r] == u32::MAX, "pattern {pattern:#x}: thread {r} is outside the group");
                continue;
            }
            let rank = group.iter().position(|&l| l == lane).unwrap() as u32;
            let of = |rank: u32| v(group[rank as usize]);
            let expected = [
                size,
                rank,
                of(size - 1),
                if rank + 1 < size { of(rank + 1) } else { v(lane) },
                if rank > 0 { of(rank - 1) } else { v(lane) },
                group.iter().map(|&l| v(l)).sum(),
                (0..=rank).map(of).sum(),
                of(0) * 3,
            ];
            assert_eq!(row[..8], expected, "pattern {pattern:#x}, thread {r} (lane {lane}, rank {rank})");
            // Sums of halves below 2^24: exact in any order.
            assert_eq!(row[10], (0..rank).map(of).sum::<u32>(), "pattern {pattern:#x}, thread {r}: exclusive scan");
            assert_eq!(f32::from_bits(row[9]), group.iter().map(|&l| v(l) as f32 + 0.5).sum::<f32>(), "pattern {pattern:#x}, thread {r}: f32 reduce");
            slots.push(row[8]);
        }
        // Every lane of every group got its own slot of the counter.
        slots.sort_unstable();
        assert_eq!(slots, (0..slots.len() as u32).collect::<Vec<_>>(), "pattern {pattern:#x}: aggregated slots");
        assert_eq!(gpu.read(&counter)?, [slots.len() as u32]);
        // Each bin: the lanes' adds, and each return the bin before its add,
        // in some order of the adds.
        let bins = gpu.read(&bins)?;
        for (bin, &total) in bins.iter().enumerate() {
            let mut adds: Vec<(u32, u32)> = (0..n)
                .map(|r| (r, (r % threads as usize % 32) as u32))
                .filter(|&(_, lane)| pattern & (1 << lane) != 0 && lane as usize % 3 == bin)
                .map(|(r, lane)| (olds[r], lane))
                .collect();
            adds.sort_unstable();
            let mut sum = 0;
            for &(old, lane) in &adds {
                assert_eq!(old, sum, "pattern {pattern:#x}: bin {bin}'s adds in order: {adds:?}");
                sum += lane;
            }
            assert_eq!(total, sum, "pattern {pattern:#x}: bin {bin}");
        }
    }
    Ok(())
}

#[test]
fn blocks_chained_by_acquire_loads_and_release_stores_add_up_on_the_emulator() -> Result<()> {
    the_chain_adds_up(&t4(), 40, 64)
}

#[test]
fn blocks_chained_by_acquire_loads_and_release_stores_add_up_with_one_worker_and_with_several() -> Result<()> {
    for workers in [1, 4] {
        let gpu = Gpu::emulated(Device::T4, Options { workers, ..Options::default() });
        the_chain_adds_up(&gpu, 24, 32)?;
    }
    Ok(())
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn blocks_chained_by_acquire_loads_and_release_stores_add_up_on_a_gpu() -> Result<()> {
    let gpu = gpu();
    the_chain_adds_up(&gpu, 40, 64)?;
    // Far more blocks than are resident at once: the ticket, not the block
    // index, orders the chain, so a waiting block never waits on one that
    // has not started.
    the_chain_adds_up(&gpu, 20_000, 128)
}

#[test]
fn a_warp_waits_for_another_through_a_shared_flag_on_the_emulator() -> Result<()> {
    the_shared_flag_is_handed_over(&t4(), 3, 64)?;
    the_shared_flag_is_handed_over(&t4(), 2, 256)
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_warp_waits_for_another_through_a_shared_flag_on_a_gpu() -> Result<()> {
    the_shared_flag_is_handed_over(&gpu(), 264, 256)
}

#[test]
fn coalesced_group_collectives_and_aggregated_atomics_match_the_cpu_on_the_emulator() -> Result<()> {
    coalesced_collectives_match_the_cpu(&t4(), 3, 64)
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn coalesced_group_collectives_and_aggregated_atomics_match_the_cpu_on_a_gpu() -> Result<()> {
    coalesced_collectives_match_the_cpu(&gpu(), 132, 256)
}

/// The fault of a launch that failed on the emulator.
fn fault(r: Result<()>) -> Fault {
    match r {
        Err(Error::Emulated { fault, .. }) => *fault,
        other => panic!("expected a fault, got {other:?}"),
    }
}

/// One `u32` of dynamic shared memory.
pub const fn four_bytes(_threads: u32) -> u32 {
    4
}

/// [`shared_flag_handoff`](gpu::kernels::waits::shared_flag_handoff) with
/// the mistakes it guards against: the flag read plainly (`racy`), or
/// never set (`never`).
///
/// # Safety
/// `out` holds one `u32`; 4 bytes of dynamic shared memory.
#[kernel(emulator, shared_memory = four_bytes)]
pub unsafe fn flag_mistakes(out: Out<u32>, racy: u32, never: u32) {
    let block = this_thread_block();
    let (t, last) = (block.thread_rank(), block.num_threads() - 1);
    let s = dynamic_shared::<u32>();
    if t == 0 {
        // SAFETY: one u32; before the barrier, this thread alone.
        unsafe { s.write(0, 0) };
    }
    block.sync();
    if t == last && never == 0 {
        // SAFETY: touched only atomically after the barrier (unless racy).
        unsafe { s.atomic_store_release(0, 1, Scope::Block) }; // the store
    }
    if t == 0 {
        loop {
            // SAFETY: as above.
            let flag = if racy != 0 { unsafe { s.read(0) } } else { unsafe { s.atomic_load_acquire(0, Scope::Block) } }; // the poll
            if flag != 0 {
                break;
            }
        }
        // SAFETY: one u32.
        unsafe { out.write(0, 1) };
    }
}

#[test]
fn a_flag_read_plainly_races_with_its_atomic_store_and_a_flag_never_set_is_a_named_deadlock() -> Result<()> {
    let gpu = t4();
    let kernel = gpu.kernel(&FLAG_MISTAKES)?;
    let mut out = gpu.zeros::<u32>(1)?;
    // SAFETY: one u32.
    unsafe { kernel.launch(1, 64, (out.slice_mut(..), 0, 0))? };
    assert_eq!(gpu.read(&out)?, [1]);
    // SAFETY: as above.
    let racy = fault(unsafe { kernel.launch(1, 64, (out.slice_mut(..), 1, 0)) }).to_string();
    assert!(racy.contains("race") && racy.contains("waits.rs:"), "{racy}");
    let line = |marker: &str| {
        let source = include_str!("waits.rs");
        source.lines().position(|l| l.trim_end().ends_with(marker)).unwrap() + 1
    };
    assert!(racy.contains(&format!("waits.rs:{}:", line("// the store"))) && racy.contains(&format!("waits.rs:{}:", line("// the poll"))), "{racy}");
    // SAFETY: as above.
    let never = fault(unsafe { kernel.launch(1, 64, (out.slice_mut(..), 0, 1)) }).to_string();
    assert!(never.contains("dynamic shared memory word 0") && never.contains(&format!("waits.rs:{}:", line("// the poll"))), "{never}");
    Ok(())
}
