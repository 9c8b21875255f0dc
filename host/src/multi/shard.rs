//! The arithmetic of a sum across GPUs, with no device: how n floats are cut
//! into shards, each GPU's grid, the longest chain of additions of the
//! combined total, a run's time across GPUs, and the crossover below which
//! one GPU is faster.

use crate::reference::longest_chain;
use crate::sizing::cooperative_grid;
use serde::Serialize;

/// The contiguous floats one GPU sums: elements `first .. first + len`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Shard {
    pub rank: u32,
    pub first: usize,
    pub len: usize,
}

/// `n` floats cut into `gpus` contiguous shards in rank order, their
/// lengths differing by at most one (the longer ones last); a shard may be
/// empty when `n < gpus`.
pub fn shards(n: usize, gpus: u32) -> Vec<Shard> {
    let start = |r: u32| (n as u128 * r as u128 / gpus as u128) as usize;
    (0..gpus).map(|rank| Shard { rank, first: start(rank), len: start(rank + 1) - start(rank) }).collect()
}

/// The cooperative grid one GPU runs for a shard of `len` floats: the
/// lesson's `min(ceil(len / threads_per_block), capacity)`, but never
/// empty: a GPU with nothing to add still launches one block, because the
/// others wait for it at the barrier (and its total, 0, is still added).
pub fn grid(len: usize, threads_per_block: u32, capacity: u32) -> u32 {
    cooperative_grid(len, threads_per_block, capacity).max(1)
}

/// The longest chain of float additions of the combined total of `ranks`
/// GPUs: the longest chain of any GPU's own total, then the `ranks`
/// additions that combine the totals (GPU 0 adding them to 0 in rank order;
/// NCCL's ring adds as many). `known` are the chains of the GPUs this
/// process drives; with one process per GPU, the others' are taken to be no
/// longer (GPUs of one kind).
pub fn combined_chain(known: &[u64], ranks: u32) -> u64 {
    known.iter().copied().max().unwrap_or(0) + ranks as u64
}

/// A shard's chain: the lesson's two stages over it on its grid.
pub fn shard_chain(len: usize, blocks: u32, threads_per_block: u32, tile: u32) -> u64 {
    longest_chain(len, blocks, threads_per_block, tile)
}

/// Each run's time across GPUs from each GPU's times for the same runs: the
/// slowest GPU's (they start together and meet at the barrier, so the
/// slowest is when the sum is done).
pub fn slowest(per_gpu: &[Vec<f64>]) -> Vec<f64> {
    let runs = per_gpu.iter().map(Vec::len).min().unwrap_or(0);
    (0..runs).map(|k| per_gpu.iter().map(|t| t[k]).fold(f64::NEG_INFINITY, f64::max)).collect()
}

/// Where every GPU starts to beat one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Crossover {
    /// Every GPU together was faster at every n measured.
    AllFaster,
    /// One GPU was faster at every n measured (or at the largest).
    OneFaster,
    /// One GPU is faster below `n`; from `n` up, every GPU together is.
    Below { n: usize },
}

/// The crossover of `points` (`(n, one GPU's time, every GPU's time)`,
/// n increasing): the smallest n from which every larger n measured is
/// faster on every GPU.
pub fn crossover(points: &[(usize, f64, f64)]) -> Crossover {
    let from = points.iter().rposition(|&(_, one, all)| all >= one).map_or(0, |i| i + 1);
    match from {
        0 if !points.is_empty() => Crossover::AllFaster,
        i if i == points.len() => Crossover::OneFaster,
        i => Crossover::Below { n: points[i].0 },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_cover_every_float_once_in_order_and_differ_by_at_most_one() {
        for (n, gpus) in [(0, 2), (1, 2), (2, 3), (7, 2), (4_194_915, 2), (4_194_915, 3), (4_294_967_296, 2), (10, 1), (5, 8)] {
            let s = shards(n, gpus);
            assert_eq!(s.len(), gpus as usize);
            assert_eq!(s[0].first, 0);
            for w in s.windows(2) {
                assert_eq!(w[0].first + w[0].len, w[1].first, "{n} on {gpus}");
            }
            assert_eq!(s.iter().map(|s| s.len).sum::<usize>(), n);
            let (lo, hi) = (s.iter().map(|s| s.len).min().unwrap(), s.iter().map(|s| s.len).max().unwrap());
            assert!(hi - lo <= 1, "{n} on {gpus}: {s:?}");
        }
        assert_eq!(shards(4_194_915, 2).iter().map(|s| s.len).collect::<Vec<_>>(), [2_097_457, 2_097_458]);
        // Fewer floats than GPUs: the first GPUs get none.
        assert_eq!(shards(1, 3).iter().map(|s| s.len).collect::<Vec<_>>(), [0, 0, 1]);
    }

    #[test]
    fn each_gpu_sizes_its_own_grid_and_an_empty_shard_still_gets_a_block() {
        // Two H200s: 8 blocks of 256 per SM x 132 SMs.
        assert_eq!(grid(2_097_458, 256, 1056), 1056);
        assert_eq!(grid(1000, 256, 1056), 4);
        assert_eq!(grid(0, 256, 1056), 1);
        // A T4 (160) next to an H200 (1056): each its own.
        assert_eq!((grid(1 << 20, 256, 160), grid(1 << 20, 256, 1056)), (160, 1056));
    }

    #[test]
    fn the_combined_chain_adds_one_addition_per_gpu_to_the_longest() {
        assert_eq!(combined_chain(&[43, 45], 2), 47);
        assert_eq!(combined_chain(&[0, 0, 0], 3), 3);
        // One process of two knows only its own GPU's chain.
        assert_eq!(combined_chain(&[45], 2), 47);
        assert_eq!(shard_chain(0, 1, 256, 32), 0);
        assert_eq!(shard_chain(2_097_458, 1056, 256, 32), 8 + 11 + 5 + 11);
    }

    #[test]
    fn a_run_across_gpus_takes_the_slowest_gpus_time() {
        assert_eq!(slowest(&[vec![1.0, 5.0, 2.0], vec![3.0, 4.0, 2.5]]), [3.0, 5.0, 2.5]);
        assert_eq!(slowest(&[vec![1.0]]), [1.0]);
    }

    #[test]
    fn the_crossover_is_where_every_larger_n_is_faster_on_every_gpu() {
        let p = |v: &[(usize, f64, f64)]| crossover(v);
        assert_eq!(p(&[(1, 1.0, 2.0), (2, 2.0, 2.5), (4, 4.0, 3.0), (8, 8.0, 5.0)]), Crossover::Below { n: 4 });
        // A dip that does not last does not count.
        assert_eq!(p(&[(1, 1.0, 0.5), (2, 2.0, 2.5), (4, 4.0, 3.0)]), Crossover::Below { n: 4 });
        assert_eq!(p(&[(1, 1.0, 0.5), (2, 2.0, 1.5)]), Crossover::AllFaster);
        assert_eq!(p(&[(1, 1.0, 1.5), (2, 2.0, 2.5)]), Crossover::OneFaster);
        assert_eq!(p(&[]), Crossover::OneFaster);
    }
}
