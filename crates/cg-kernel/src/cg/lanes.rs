//! Lane arithmetic for warp-sized groups: pure functions, shared by the PTX
//! build and the host's unit tests. Their arithmetic wraps, as the GPU's
//! does: an argument outside the range a function names gives a meaningless
//! answer, never a panic.

/// The lanes of the `size`-lane tile that holds `lane` (the C++
/// `build_mask()`), for `size` a power of two from 1 to 32.
#[inline(always)]
pub const fn tile_mask(lane: u32, size: u32) -> u32 {
    if size >= 32 { u32::MAX } else { (1u32 << size).wrapping_sub(1).wrapping_shl(lane & !size.wrapping_sub(1)) }
}

/// The `c` operand of `shfl.sync` for a segment of `width` lanes: the segment
/// mask in bits 8..13 and the clamp in bits 0..5 (`up` clamps at 0, the other
/// modes at the segment's last lane), for `width` from 1 to 32.
#[inline(always)]
pub const fn shfl_c(width: u32, up: bool) -> u32 {
    let seg = 32u32.wrapping_sub(width) << 8;
    if up { seg } else { seg | 0x1f }
}

/// Packs `lane_bits` (bits at warp lane positions) into rank order over the
/// lanes of `mask`: bit `r` of the result is the bit of the `r`-th lane of `mask`.
/// This is how `coalesced_group::ballot` numbers its result.
#[inline(always)]
pub const fn pack_lanes(mask: u32, lane_bits: u32) -> u32 {
    let mut packed = 0;
    let mut rank = 0;
    let mut lane = 0;
    while lane < 32 {
        if mask & (1 << lane) != 0 {
            if lane_bits & (1 << lane) != 0 {
                packed |= 1 << rank;
            }
            rank += 1;
        }
        lane += 1;
    }
    packed
}

/// The rank of `lane` (0 to 31) among the lanes of `mask`: how many of them
/// are below it.
#[inline(always)]
pub const fn rank_in_mask(mask: u32, lane: u32) -> u32 {
    (mask & 1u32.wrapping_shl(lane).wrapping_sub(1)).count_ones()
}

/// The lane (0 to 31) of the rank-`rank` lane of `mask`: the position of
/// its `rank`-th set bit, lowest first (PTX `fns.b32`), for `rank` below
/// `mask`'s count of lanes.
#[inline(always)]
pub const fn lane_of_rank(mask: u32, rank: u32) -> u32 {
    // A binary search: halves of 16, 8, 4, 2 and 1 lanes, each step keeping
    // the half that holds the lane, by the count of lanes below it.
    let (mut lane, mut rank, mut width) = (0u32, rank, 16u32);
    while width > 0 {
        let below = ((mask >> lane) & ((1u32 << width) - 1)).count_ones();
        if rank >= below {
            rank -= below;
            lane += width;
        }
        width /= 2;
    }
    lane
}

/// The linear rank of `index` in a box of `dims` (x fastest), as CUDA numbers
/// threads in a block and blocks in a grid.
#[inline(always)]
pub const fn linear_rank(index: [u32; 3], dims: [u32; 3]) -> u64 {
    (index[2] as u64 * dims[1] as u64 + index[1] as u64).wrapping_mul(dims[0] as u64).wrapping_add(index[0] as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lane_of_rank_is_the_rank_th_set_bit() {
        for mask in [u32::MAX, 1, 0x8000_0000, 0xaaaa_aaaa, 0x5555_5555, 0x0f0f_00f1, 0x8000_0001, 0x1234_5678] {
            let lanes: Vec<u32> = (0..32).filter(|l| mask & (1 << l) != 0).collect();
            for (rank, &lane) in lanes.iter().enumerate() {
                assert_eq!(lane_of_rank(mask, rank as u32), lane, "mask {mask:#x} rank {rank}");
                assert_eq!(rank_in_mask(mask, lane), rank as u32);
            }
        }
    }

    /// Before 2026-12-04 these public functions panicked (in a debug build)
    /// on arguments outside their ranges; now they wrap, as the GPU does.
    #[test]
    fn lane_rank_and_barrier_arithmetic_never_panics() {
        use crate::cg::{barrier, ranks};
        let edges = [0, 1, 31, 32, 33, 65_535, 65_536, u32::MAX];
        for &a in &edges {
            for &b in &edges {
                let _ = (tile_mask(a, b), shfl_c(a, b != 0), rank_in_mask(a, b), pack_lanes(a, b), linear_rank([a, b, a], [b, a, b]));
                let _ = (barrier::arrival(true, a), barrier::arrivals(b, a), barrier::arrivals(u32::MAX, a));
                let dims = [a, b, b];
                let _ = (ranks::block_rank(dims, dims), ranks::block_count(dims), ranks::thread_count(dims, a));
                let _ = (ranks::thread_rank(dims, dims, a, b), ranks::narrow_thread_rank(dims, dims, a, b), ranks::narrow_thread_count(dims, b));
            }
        }
    }

    #[test]
    fn tile_masks_cover_each_tile_of_the_warp() {
        assert_eq!(tile_mask(0, 32), u32::MAX);
        assert_eq!(tile_mask(31, 32), u32::MAX);
        assert_eq!(tile_mask(5, 8), 0x0000_00ff);
        assert_eq!(tile_mask(13, 8), 0x0000_ff00);
        assert_eq!(tile_mask(31, 16), 0xffff_0000);
        assert_eq!(tile_mask(7, 1), 1 << 7);
        for size in [1, 2, 4, 8, 16, 32] {
            let mut union = 0u32;
            for lane in 0..32 {
                let m = tile_mask(lane, size);
                assert_eq!(m.count_ones(), size);
                assert!(m & (1 << lane) != 0);
                union |= m;
            }
            assert_eq!(union, u32::MAX);
        }
    }

    #[test]
    fn shuffle_c_operand_matches_the_ptx_layout() {
        assert_eq!(shfl_c(32, false), 0x1f);
        assert_eq!(shfl_c(32, true), 0);
        assert_eq!(shfl_c(16, false), 0x101f);
        assert_eq!(shfl_c(8, true), 0x1800);
    }

    #[test]
    fn packed_ballot_is_numbered_by_rank_in_the_group() {
        // The lesson's warp 0 branch: lanes 2, 4 and 8.
        let mask = (1 << 2) | (1 << 4) | (1 << 8);
        assert_eq!(pack_lanes(mask, mask), 0b111);
        assert_eq!(pack_lanes(mask, 1 << 4), 0b010);
        assert_eq!(pack_lanes(mask, 1 << 3), 0);
        assert_eq!(pack_lanes(u32::MAX, 0xdead_beef), 0xdead_beef);
    }

    #[test]
    fn rank_in_mask_counts_the_lanes_below() {
        let mask = (1 << 2) | (1 << 4) | (1 << 8);
        assert_eq!(rank_in_mask(mask, 2), 0);
        assert_eq!(rank_in_mask(mask, 4), 1);
        assert_eq!(rank_in_mask(mask, 8), 2);
        assert_eq!(rank_in_mask(0xffff, 15), 15);
    }

    #[test]
    fn linear_rank_runs_x_fastest() {
        assert_eq!(linear_rank([3, 0, 0], [256, 1, 1]), 3);
        assert_eq!(linear_rank([1, 2, 3], [4, 5, 6]), (3 * 5 + 2) * 4 + 1);
    }
}
