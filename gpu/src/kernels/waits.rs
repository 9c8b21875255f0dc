//! Threads that wait for each other through memory, and warps that act as
//! one: atomic loads and stores with an order and a scope, the collectives
//! of `coalesced_threads()`, and the warp-aggregated atomic. For the tests
//! (feature `probes`): `host/tests/waits.rs` runs each on the emulator and on
//! a GPU against the CPU's answer, and `host/tests/ptx.rs` counts their
//! instructions.
//!
//! - [`chained_tiles`]: each block takes a ticket, waits for the block
//!   before it in ticket order to publish its running total (an acquire
//!   load of a 64-bit word, the flag in the high half), adds its own and
//!   publishes (a release store): decoupled look-back's chain, with no grid
//!   barrier and no cooperative launch.
//! - [`shared_flag_handoff`]: warp 0 polls a flag in shared memory that the
//!   block's last warp sets; no barrier between them.
//! - [`coalesced_collectives`]: every collective of a coalesced group, in a
//!   branch a pattern of lanes takes.

use crate::cg::{Plus, coalesced_threads, this_grid, this_thread_block};
use crate::kernel;
use crate::mem::{Out, Scope, dynamic_shared};

/// The flag of [`chained_tiles`]' words: set in the high half once the
/// running total in the low half is the block's inclusive total.
pub const PUBLISHED: u64 = 1 << 32;

/// Block `k` in ticket order: `totals[k]` = `own[0] + ... + own[k]`, where
/// `own[k] = k + 1`, found by waiting for block `k - 1`'s `flags[k - 1]`
/// (`PUBLISHED | its total`) and publishing `flags[k]` the same way. Every
/// store and load of a flag is atomic: `atomic_store_release` and
/// `atomic_load_acquire` at device scope, and the ticket an `atomic_add`.
///
/// # Safety
/// `ticket` holds one `u32`, zero before the launch; `flags` and `totals`
/// one element per block of the grid, `flags` zero before the launch;
/// launched with 4 bytes of dynamic shared memory.
#[kernel(shared_memory = four_bytes)]
pub unsafe fn chained_tiles<const TILE: u32 = 32>(ticket: Out<u32>, flags: Out<u64>, totals: Out<u64>) {
    let block = this_thread_block();
    let mine = dynamic_shared::<u32>();
    if block.thread_rank() == 0 {
        // SAFETY: one u32 of shared memory, this thread's before the barrier;
        // the ticket is touched only atomically.
        unsafe { mine.write(0, ticket.atomic_add(0, 1)) };
    }
    block.sync();
    // SAFETY: written before the barrier.
    let k = unsafe { mine.read(0) } as usize;
    if block.thread_rank() == 0 {
        let own = k as u64 + 1;
        let mut before = 0u64;
        if k > 0 {
            loop {
                // SAFETY: k - 1 < the grid's blocks; flags are touched only atomically.
                let word = unsafe { flags.atomic_load_acquire(k - 1, Scope::Device) };
                if word & PUBLISHED != 0 {
                    before = word & (PUBLISHED - 1);
                    break;
                }
            }
        }
        // SAFETY: flags[k] is this block's, touched only atomically; totals[k] this thread's.
        unsafe {
            flags.atomic_store_release(k, PUBLISHED | (before + own), Scope::Device);
            totals.write(k, before + own);
        }
    }
}

/// Dynamic shared memory of one `u32`.
pub const fn four_bytes(_threads_per_block: u32, _tile: u32) -> u32 {
    4
}

/// Warp 0's thread 0 polls a shared flag (`atomic_load_acquire`, block
/// scope) until the block's last thread sets it (`atomic_store_release`),
/// with nothing between them but the flag; then it writes
/// `out[block] = ` the value the last thread stored beside the flag
/// (relaxed, read after the acquire). The block has at least two warps.
///
/// # Safety
/// `out` holds one `u32` per block; 8 bytes of dynamic shared memory, the
/// flag zero (thread 0 clears it before the barrier).
#[kernel(shared_memory = eight_bytes)]
pub unsafe fn shared_flag_handoff<const TILE: u32 = 32>(out: Out<u32>) {
    let block = this_thread_block();
    let (t, last) = (block.thread_rank(), block.num_threads() - 1);
    let s = dynamic_shared::<u32>();
    if t == 0 {
        // SAFETY: two u32 of shared memory; before the barrier, this thread alone.
        unsafe {
            s.write(0, 0);
            s.write(1, 0);
        }
    }
    block.sync();
    if t == last {
        // SAFETY: the two words, touched only atomically after the barrier.
        unsafe {
            s.atomic_store(1, 7 + block.group_index().x, Scope::Block);
            s.atomic_store_release(0, 1, Scope::Block);
        }
    }
    if t == 0 {
        // SAFETY: as above.
        while unsafe { s.atomic_load_acquire(0, Scope::Block) } == 0 {}
        // SAFETY: as above; out[block] is this thread's.
        unsafe { out.write(block.group_index().x as usize, s.atomic_load(1, Scope::Block)) };
    }
}

/// Dynamic shared memory of two `u32`.
pub const fn eight_bytes(_threads_per_block: u32, _tile: u32) -> u32 {
    8
}

/// Values [`coalesced_collectives`] writes per thread.
pub const COALESCED_VALUES: usize = 11;

/// The lanes of `pattern` (bit `l` for lane `l`) in each warp take a
/// branch, make a `coalesced_threads()` group and write, per grid thread
/// `r` (thread `r` outside it writes `u32::MAX` to all eleven):
/// `out[11r..]` = its size, its rank, `shfl(v, size - 1)`, `shfl_down(v, 1)`,
/// `shfl_up(v, 1)`, `reduce(v, Plus)`, `inclusive_scan(v, Plus)`,
/// `invoke_one_broadcast` of rank 0's `v * 3`, and the slot
/// `atomic_add_aggregated(counter, 0, 1)` gave it, where `v = 100 + lane`,
/// and the bits of `reduce(v + 0.5, Plus)` in `f32` (a sum of shuffles on
/// every GPU, where the `u32` sum may be one `redux.sync`), and
/// `exclusive_scan(v, Plus)`.
/// Each lane also adds `lane` to `bins[lane % 3]` with
/// `atomic_add_aggregated`, whose return it writes to `olds[r]`.
///
/// # Safety
/// `out` holds 11 per thread of the grid, `olds` one per thread, `counter`
/// one and `bins` three, both zero before the launch.
#[kernel]
pub unsafe fn coalesced_collectives(out: Out<u32>, olds: Out<u32>, counter: Out<u32>, bins: Out<u32>, pattern: u32) {
    let r = this_grid().thread_rank();
    let lane = (this_thread_block().thread_rank() % 32) as u32;
    let mut row = [u32::MAX; COALESCED_VALUES];
    let mut old = u32::MAX;
    if pattern & (1 << lane) != 0 {
        let g = coalesced_threads();
        let v = 100 + lane;
        row[0] = g.num_threads();
        row[1] = g.thread_rank();
        row[2] = g.shfl(v, g.num_threads() - 1);
        row[3] = g.shfl_down(v, 1);
        row[4] = g.shfl_up(v, 1);
        row[5] = g.reduce(v, Plus);
        row[6] = g.inclusive_scan(v, Plus);
        row[7] = g.invoke_one_broadcast(|| v * 3);
        row[9] = g.reduce(v as f32 + 0.5, Plus).to_bits();
        row[10] = g.exclusive_scan(v, Plus);
        // SAFETY: counter holds one, bins three; both touched only atomically.
        unsafe {
            row[8] = g.atomic_add_aggregated(counter, 0, 1);
            old = g.atomic_add_aggregated(bins, (lane % 3) as usize, lane);
        }
    }
    for (k, &x) in row.iter().enumerate() {
        // SAFETY: COALESCED_VALUES per thread; this thread's own.
        unsafe { out.write(COALESCED_VALUES * r + k, x) };
    }
    // SAFETY: one per thread; this thread's own.
    unsafe { olds.write(r, old) };
}
