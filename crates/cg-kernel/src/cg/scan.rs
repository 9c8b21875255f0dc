//! Scans over a tile, as `<cooperative_groups/scan.h>` has them:
//! `cg::inclusive_scan(tile, v, op)` and `cg::exclusive_scan(tile, v, op)`.

use super::ops::ReduceOp;
use super::tile::{ShuffleValue, ThreadBlockTile};

/// `v` combined over this thread and every thread of lower rank in the tile
/// (`cg::inclusive_scan(tile, v, op)`): rank `r` gets
/// `v[0] op v[1] op ... op v[r]`.
///
/// Hillis-Steele, as C++ compiles it for a tile: `log2(N)` steps, each one
/// `shfl.sync.up` per 32-bit word of `T` (five for a tile of 32 `f32`, ten
/// for `f64`), after which rank `r` combines its value with the one from
/// rank `r - d` (`op(mine, below)`, as C++ does) for `d` = 1, 2, 4, ...
/// while `d <= r`. That order is fixed, so a float result is the same on
/// every run. Every thread of the tile must make the call (as every tile
/// collective).
///
/// ```no_run
/// use cg_kernel::cg::{Plus, ThreadBlockTile, inclusive_scan};
///
/// /// C++: `return cg::inclusive_scan(tile, count);`: each thread's end
/// /// offset, when each writes `count` items after the threads below it.
/// fn end_of_mine(tile: &ThreadBlockTile<32>, count: u32) -> u32 {
///     inclusive_scan(tile, count, Plus)
/// }
/// ```
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn inclusive_scan<const N: u32, T: ShuffleValue, Op: const ReduceOp<T>>(tile: &ThreadBlockTile<N>, v: T, _op: Op) -> T {
    emu_call!("cg::inclusive_scan()");
    let rank = tile.thread_rank();
    // The steps over distances 1 to 16, written out (as `reduce`'s are) so
    // that the shuffles are straight-line code; a step whose distance is not
    // below N folds away.
    let step = |sum: T, delta: u32| {
        if delta < N {
            let below = tile.shfl_up(sum, delta);
            if rank >= delta { Op::combine(sum, below) } else { sum }
        } else {
            sum
        }
    };
    step(step(step(step(step(v, 1), 2), 4), 8), 16)
}

/// `v` combined over every thread of lower rank in the tile, not this one
/// (`cg::exclusive_scan(tile, v, op)`): rank `r` gets
/// `v[0] op ... op v[r - 1]`, and rank 0 gets the operator's identity
/// ([`ReduceOp::identity`]: `0` for `Plus`, `BitOr` and `BitXor`, all ones for
/// `BitAnd`, the type's largest value or `+∞` for `Less`, its smallest or
/// `−∞` for `Greater`).
///
/// Rank 0's value, checked against the C++ header
/// (`cooperative_groups/details/coalesced_scan.h`, CUDA 12.9): C++ gives rank 0
/// a value-initialized `T{}`, which is `0`; so the two agree for `Plus`,
/// `BitOr` and `BitXor`, and where C++'s `0` is no identity (`Less`,
/// `Greater`, `BitAnd`) this gives the identity, so that
/// `op(exclusive, v) == inclusive` holds at every rank.
///
/// The inclusive scan, then, as C++ does: for integer `Plus` and for `BitXor`
/// `inclusive - v` or `inclusive ^ v`, no instruction more; for every other
/// operator one more `shfl.sync.up` per word (the inclusive value of the rank
/// below).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn exclusive_scan<const N: u32, T: ShuffleValue, Op: const ReduceOp<T>>(tile: &ThreadBlockTile<N>, v: T, op: Op) -> T {
    emu_call!("cg::exclusive_scan()");
    let inclusive = inclusive_scan(tile, v, op);
    exclusive_from_inclusive::<N, T, Op>(tile, inclusive, v)
}

/// The exclusive scan's value from the inclusive one (see [`exclusive_scan`]).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub(super) fn exclusive_from_inclusive<const N: u32, T: ShuffleValue, Op: const ReduceOp<T>>(tile: &ThreadBlockTile<N>, inclusive: T, v: T) -> T {
    if N == 1 {
        // A tile of one thread: nothing below it.
        return Op::identity();
    }
    match Op::undo(inclusive, v) {
        Some(exclusive) => exclusive,
        None => {
            let below = tile.shfl_up(inclusive, 1);
            if tile.thread_rank() == 0 { Op::identity() } else { below }
        }
    }
}

impl<const N: u32> ThreadBlockTile<N> {
    /// [`inclusive_scan`] as a method.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn inclusive_scan<T: ShuffleValue, Op: const ReduceOp<T>>(&self, v: T, op: Op) -> T {
        inclusive_scan(self, v, op)
    }

    /// [`exclusive_scan`] as a method.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn exclusive_scan<T: ShuffleValue, Op: const ReduceOp<T>>(&self, v: T, op: Op) -> T {
        exclusive_scan(self, v, op)
    }
}
