use super::lanes::{pack_lanes, rank_in_mask};
use super::tile::{ShuffleValue, match_all_lanes, match_any_lanes};
use crate::arch;

/// The lanes of this warp that are executing together at the point of the call
/// (`cg::coalesced_group`).
///
/// Opportunistic, as in C++: it names whichever lanes are active, with no
/// promise about which those are beyond "this one and the others converged here".
///
/// ```no_run
/// # use cg_kernel as gpu;
/// use gpu::cg::coalesced_threads;
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
}
