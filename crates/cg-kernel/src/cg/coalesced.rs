use super::lanes::{lane_of_rank, pack_lanes, rank_in_mask, shfl_c};
use super::ops::{Plus, ReduceOp};
use super::tile::{ShuffleValue, match_all_lanes, match_any_lanes};
use crate::arch;
use crate::mem::{Atomic, Out, Word};

/// The lanes of this warp that are executing together at the point of the call
/// (`cg::coalesced_group`).
///
/// Opportunistic, as in C++: it names whichever lanes are active, with no
/// promise about which those are beyond "this one and the others converged here".
///
/// ```no_run
/// use cg_kernel::cg::coalesced_threads;
///
/// /// How many lanes of this warp took the branch (C++: `cg::coalesced_threads().num_threads()`).
/// fn lanes_taking(branch: bool) -> u32 {
///     if branch {
///         let active = coalesced_threads(); // the lanes here, now
///         return active.num_threads();
///     }
///     0
/// }
/// ```
pub struct CoalescedGroup {
    mask: u32,
}

/// The active lanes of this warp (`cg::coalesced_threads()`, from `__activemask()`).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn coalesced_threads() -> CoalescedGroup {
    emu_call!("cg::coalesced_threads()");
    CoalescedGroup { mask: arch::active_mask() }
}

// SAFETY (for every collective below): the mask is the set of lanes that were
// active together when the group was made, this lane among them; the same
// lanes calling the same collective is the group's contract.
impl CoalescedGroup {
    /// How many lanes are in the group (`num_threads()`, `__popc(mask)`).
    #[inline(always)]
    pub fn num_threads(&self) -> u32 {
        arch::popc(self.mask)
    }

    /// How many lanes are in the group (`size()`, the older C++ name of
    /// [`num_threads`](Self::num_threads)).
    #[inline(always)]
    pub fn size(&self) -> u32 {
        self.num_threads()
    }

    /// This lane's rank among the group's lanes, lowest lane first (`thread_rank()`).
    #[inline(always)]
    pub fn thread_rank(&self) -> u32 {
        rank_in_mask(self.mask, arch::lane_id())
    }

    /// The group's lanes as a warp mask (what `__activemask()` returned).
    #[inline(always)]
    pub fn mask(&self) -> u32 {
        self.mask
    }

    /// Waits for the group's lanes (`sync()`, `__syncwarp(mask)`).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn sync(&self) {
        emu_call!("coalesced.sync()");
        // SAFETY: see above.
        unsafe { arch::sync_warp(self.mask) }
    }

    /// Bit `r` set where the group's rank-`r` lane has `pred` (`ballot(pred)`;
    /// packed to group ranks as in C++).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn ballot(&self, pred: bool) -> u32 {
        emu_call!("coalesced.ballot()");
        // SAFETY: see above.
        pack_lanes(self.mask, unsafe { arch::ballot(self.mask, pred) })
    }

    /// Whether any lane of the group has `pred` (`any(pred)`).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn any(&self, pred: bool) -> bool {
        emu_call!("coalesced.any()");
        // SAFETY: see above.
        unsafe { arch::ballot(self.mask, pred) != 0 }
    }

    /// Whether every lane of the group has `pred` (`all(pred)`).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn all(&self, pred: bool) -> bool {
        emu_call!("coalesced.all()");
        // SAFETY: see above.
        unsafe { arch::ballot(self.mask, pred) == self.mask }
    }

    /// Bit `r` set where the group's rank-`r` lane has the same `v` as this
    /// one (`match_any(v)`, sm_70+; packed to group ranks as in C++). Values
    /// compare by their bits.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn match_any<T: ShuffleValue>(&self, v: T) -> u32 {
        emu_call!("coalesced.match_any()");
        // SAFETY: see above.
        pack_lanes(self.mask, unsafe { match_any_lanes(self.mask, v) })
    }

    /// Whether every lane of the group has the same `v`, and the group's
    /// ranks as a mask if so, `0` if not (`match_all(v, pred)`, sm_70+).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn match_all<T: ShuffleValue>(&self, v: T) -> (u32, bool) {
        emu_call!("coalesced.match_all()");
        // SAFETY: see above.
        let lanes = pack_lanes(self.mask, unsafe { match_all_lanes(self.mask, v) });
        (lanes, lanes != 0)
    }

    /// The group's lane (0 to 31) holding rank `rank`.
    #[inline(always)]
    fn lane_of(&self, rank: u32) -> u32 {
        lane_of_rank(self.mask, rank)
    }

    /// `v` from the group's rank-`src` lane, `src` taken modulo the group's
    /// size (`shfl(v, src)`; C++ numbers `src` by group rank, as here).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn shfl<T: ShuffleValue>(&self, v: T, src: u32) -> T {
        emu_call!("coalesced.shfl()");
        let (mask, lane) = (self.mask, self.lane_of(src % self.num_threads()));
        // SAFETY: see above.
        v.shuffle(|w| unsafe { arch::shfl_idx(mask, w, lane, shfl_c(32, false)) })
    }

    /// `v` from rank `thread_rank() + delta`, or this lane's own `v` where
    /// that is past the group's last rank (`shfl_down(v, delta)`).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn shfl_down<T: ShuffleValue>(&self, v: T, delta: u32) -> T {
        emu_call!("coalesced.shfl_down()");
        let rank = self.thread_rank().wrapping_add(delta);
        let lane = if rank < self.num_threads() { self.lane_of(rank) } else { arch::lane_id() };
        let mask = self.mask;
        // SAFETY: see above.
        v.shuffle(|w| unsafe { arch::shfl_idx(mask, w, lane, shfl_c(32, false)) })
    }

    /// `v` from rank `thread_rank() - delta`, or this lane's own `v` where
    /// that is before rank 0 (`shfl_up(v, delta)`).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn shfl_up<T: ShuffleValue>(&self, v: T, delta: u32) -> T {
        emu_call!("coalesced.shfl_up()");
        let rank = self.thread_rank();
        let lane = if rank >= delta { self.lane_of(rank - delta) } else { arch::lane_id() };
        let mask = self.mask;
        // SAFETY: see above.
        v.shuffle(|w| unsafe { arch::shfl_idx(mask, w, lane, shfl_c(32, false)) })
    }

    /// Combines `v` over the group's lanes and returns the result to every
    /// one (`cg::reduce(coalesced_threads(), v, op)`).
    ///
    /// A whole warp is the tile's butterfly ([`reduce`](super::reduce));
    /// 32-bit integer `Plus`, `Less` and `Greater` on sm_80+ are one
    /// `redux.sync` for any group; otherwise rank `r` adds rank `r + 1`'s,
    /// then `r + 2`'s, `r + 4`'s partials (`log2` of the size in shuffles,
    /// a fixed order, so a float result is the same on every run), and rank
    /// 0's result is broadcast.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn reduce<T: ShuffleValue, Op: const ReduceOp<T>>(&self, v: T, _op: Op) -> T {
        emu_call!("cg::reduce()");
        // SAFETY: see above.
        if let Some(r) = unsafe { super::tile::hardware::<T, Op>(self.mask, v) } {
            return r;
        }
        let (n, rank) = (self.num_threads(), self.thread_rank());
        let mut v = v;
        let mut offset = 1;
        while offset < n {
            let theirs = self.shfl_down(v, offset);
            if rank + offset < n {
                v = Op::combine(v, theirs);
            }
            offset *= 2;
        }
        self.shfl(v, 0)
    }

    /// The inclusive scan of `v` over the group's ranks: rank `r` gets
    /// `v` of ranks `0..=r` combined (`cg::inclusive_scan(coalesced_threads(), v, op)`).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn inclusive_scan<T: ShuffleValue, Op: const ReduceOp<T>>(&self, v: T, _op: Op) -> T {
        emu_call!("cg::inclusive_scan()");
        let rank = self.thread_rank();
        let mut v = v;
        let mut offset = 1;
        while offset < self.num_threads() {
            let theirs = self.shfl_up(v, offset);
            if rank >= offset {
                v = Op::combine(theirs, v);
            }
            offset *= 2;
        }
        v
    }

    /// The exclusive scan of `v` over the group's ranks: rank `r` gets
    /// `v` of ranks `0..r` combined, rank 0 the operator's identity
    /// (`cg::exclusive_scan(coalesced_threads(), v, op)`).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn exclusive_scan<T: ShuffleValue, Op: const ReduceOp<T>>(&self, v: T, op: Op) -> T {
        let inclusive = self.inclusive_scan(v, op);
        let before = self.shfl_up(inclusive, 1);
        if self.thread_rank() == 0 { Op::identity() } else { before }
    }

    /// Runs `f` on one lane of the group, its rank 0 (`cg::invoke_one(group, f)`).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn invoke_one(&self, f: impl FnOnce()) {
        if self.thread_rank() == 0 {
            f();
        }
    }

    /// Runs `f` on one lane of the group, its rank 0, and returns what it
    /// returned to every lane (`cg::invoke_one_broadcast(group, f)`).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn invoke_one_broadcast<T: ShuffleValue + Word>(&self, f: impl FnOnce() -> T) -> T {
        let mine = if self.thread_rank() == 0 { f() } else { T::from_bits64(0) };
        self.shfl(mine, 0)
    }

    /// `out[i] += v` for every lane of the group, with one atomic per
    /// element the lanes name rather than one per lane, and each lane's
    /// return what its own [`atomic_add`](Out::atomic_add) would have
    /// returned had the lanes gone in rank order: the warp-aggregated atomic
    /// (CUDA's `atomicAggInc` pattern, and `cg::reduce_update_async` with a
    /// return).
    ///
    /// Lanes that name the same `i` are found with `match_any` and add as
    /// one: an inclusive scan of their `v` over their ranks, one
    /// `atomic_add` of the total by the lowest of them, and its old value
    /// broadcast. With every lane adding 1 to one counter (a queue's tail),
    /// each lane gets its own slot and the counter one atomic.
    ///
    /// # Safety
    /// As [`Out::atomic_add`], for each lane's `i`; every lane of the group
    /// makes the call.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn atomic_add_aggregated<T: Atomic + ShuffleValue + Word>(&self, out: Out<T>, i: usize, v: T) -> T
    where
        Plus: const ReduceOp<T>,
    {
        emu_call!("coalesced.atomic_add_aggregated()");
        // SAFETY: see above.
        let peers = CoalescedGroup { mask: unsafe { match_any_lanes(self.mask, i as u64) } };
        let upto = peers.inclusive_scan(v, Plus);
        let total = peers.shfl(upto, peers.num_threads() - 1);
        let before = peers.shfl_up(upto, 1);
        // SAFETY: the caller's contract.
        let base = peers.invoke_one_broadcast(|| unsafe { out.atomic_add(i, total) });
        if peers.thread_rank() == 0 { base } else { Plus::combine(base, before) }
    }
}
