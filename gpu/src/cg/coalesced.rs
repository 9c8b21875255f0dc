use super::lanes::{pack_lanes, rank_in_mask};
use crate::arch;

/// The lanes of this warp that are executing together at the point of the call
/// (`cg::coalesced_group`).
///
/// Opportunistic, as in C++: it names whichever lanes are active, with no
/// promise about which those are beyond "this one and the others converged here".
pub struct CoalescedGroup {
    mask: u32,
}

/// The active lanes of this warp (`cg::coalesced_threads()`, from `__activemask()`).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn coalesced_threads() -> CoalescedGroup {
    CoalescedGroup { mask: arch::active_mask() }
}

impl CoalescedGroup {
    /// How many lanes are in the group (`num_threads()`, `__popc(mask)`).
    #[inline(always)]
    pub fn num_threads(&self) -> u32 {
        arch::popc(self.mask)
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
    pub fn sync(&self) {
        arch::sync_warp(self.mask)
    }

    /// Bit `r` set where the group's rank-`r` lane has `pred` (`ballot(pred)`;
    /// packed to group ranks as in C++).
    #[inline(always)]
    pub fn ballot(&self, pred: bool) -> u32 {
        pack_lanes(self.mask, arch::ballot(self.mask, pred))
    }

    /// Whether any lane of the group has `pred` (`any(pred)`).
    #[inline(always)]
    pub fn any(&self, pred: bool) -> bool {
        arch::ballot(self.mask, pred) != 0
    }

    /// Whether every lane of the group has `pred` (`all(pred)`).
    #[inline(always)]
    pub fn all(&self, pred: bool) -> bool {
        arch::ballot(self.mask, pred) == self.mask
    }
}
