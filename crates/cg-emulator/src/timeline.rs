//! A traced launch's picture in the emulated device's own time, not the
//! CPU's: each block's course is the memory accesses it made between its
//! start, its grid barriers and its end, laid out as the emulated GPU would
//! run them. Blocks start in order on the SM slot that frees first (all at
//! once when they fit), resident blocks advance together, and a grid barrier
//! completes when its last block arrives. How the CPU's workers happened to
//! take the blocks leaves no mark.

use crate::spec::BlockTrace;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

/// What ended one stretch of a block's run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stop {
    /// It arrived at its cluster's barrier.
    Cluster,
    /// It arrived at a grid barrier.
    Grid,
    /// It returned, or faulted.
    End,
}

/// One block's record, as the launch kept it.
#[derive(Clone, Debug, Default)]
pub(crate) struct Course {
    /// Memory accesses in each stretch, and what ended it: start to the first
    /// barrier, between barriers, the last barrier to the end.
    pub pieces: Vec<(u64, Stop)>,
    /// It returned (not parked at a barrier for ever, nor faulted).
    pub done: bool,
    /// Accesses of the stretch in progress, made before the block last
    /// gave its worker way while polling.
    pub unfinished: u64,
}

/// The device's residency: `fit` blocks at once, on `sms` SMs, in clusters of `cluster` blocks.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Residency {
    pub fit: u32,
    pub sms: u32,
    pub cluster: Option<u32>,
}

/// Each started block's trace: its place is the emulated SM of the slot it
/// got, its times are logical (accesses made by a block, resident blocks in
/// step). Where any barrier completed and every block was resident, each
/// stretch starts when the barrier before it releases: a grid barrier when
/// the grid's last block arrives, a cluster barrier when its cluster's last does.
pub(crate) fn lay_out(courses: &BTreeMap<u32, Course>, r: Residency) -> Vec<BlockTrace> {
    let fit = r.fit.max(1);
    let sms = r.sms.max(1);
    // Free slots by the time they free; ties go to the lowest slot, so the
    // first wave spreads round the SMs as a GPU's block scheduler does.
    let mut free: BinaryHeap<Reverse<(u64, u32)>> = (0..fit).map(|s| Reverse((0, s))).collect();
    let mut out: Vec<BlockTrace> = Vec::with_capacity(courses.len());
    let released = |c: &Course| c.pieces.len() > 1;
    let barriers = courses.values().any(released);
    let resident = courses.len() as u32 <= fit;
    for (&block, c) in courses {
        // A block that never returned keeps its slot.
        let Reverse((start, slot)) = free.pop().unwrap_or(Reverse((0, 0)));
        let mut t = BlockTrace { block, place: slot % sms, start, arrive: None, leave: None, cluster_arrive: None, cluster_leave: None, end: None };
        if !(barriers && resident) {
            let length: u64 = c.pieces.iter().map(|p| p.0).sum();
            if c.done {
                t.end = Some(start + length);
                free.push(Reverse((start + length, slot)));
            } else if let [(first, Stop::Grid)] = c.pieces[..] {
                t.arrive = Some(start + first);
            }
        }
        out.push(t);
    }
    if barriers && resident {
        step_through_barriers(courses, &mut out, r.cluster.unwrap_or(1).max(1));
    }
    out
}

/// Lays out the stretches of resident blocks, stretch `i` of every block
/// together: each starts when the barrier that ended stretch `i - 1` released.
fn step_through_barriers(courses: &BTreeMap<u32, Course>, out: &mut [BlockTrace], cluster: u32) {
    let mut at: Vec<u64> = out.iter().map(|t| t.start).collect();
    let longest = courses.values().map(|c| c.pieces.len()).max().unwrap_or(0);
    for i in 0..longest {
        let arrivals: Vec<Option<(u64, Stop)>> = courses.values().zip(&at).map(|(c, &a)| c.pieces.get(i).map(|&(len, stop)| (a + len, stop))).collect();
        let release = |b: usize, stop: Stop| -> u64 {
            let group = |j: usize| match stop {
                Stop::Cluster => j as u32 / cluster == b as u32 / cluster,
                _ => true,
            };
            arrivals
                .iter()
                .enumerate()
                .filter(|&(j, a)| group(j) && a.is_some_and(|(_, s)| s == stop))
                .filter_map(|(_, a)| a.map(|(x, _)| x))
                .max()
                .unwrap_or(0)
        };
        for (b, ((t, c), arrival)) in out.iter_mut().zip(courses.values()).zip(&arrivals).enumerate() {
            let Some((x, stop)) = *arrival else { continue };
            // A barrier released only if the block's run went on past it.
            let went_on = c.pieces.len() > i + 1;
            match stop {
                Stop::End => t.end = c.done.then_some(x),
                Stop::Grid if t.arrive.is_none() => {
                    t.arrive = Some(x);
                    t.leave = went_on.then(|| release(b, stop));
                }
                // The last cluster barrier: where blocks wait for rank 0's reads.
                Stop::Cluster => {
                    t.cluster_arrive = Some(x);
                    t.cluster_leave = went_on.then(|| release(b, stop));
                }
                _ => {}
            }
            at[b] = if went_on { release(b, stop) } else { x };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Stretches ended by grid barriers, the last by the end (or, not done, by a barrier never released).
    fn course(segments: &[u64], done: bool) -> Course {
        let last = if done { Stop::End } else { Stop::Grid };
        let pieces = segments.iter().enumerate().map(|(i, &s)| (s, if i + 1 == segments.len() { last } else { Stop::Grid })).collect();
        Course { pieces, done, unfinished: 0 }
    }

    fn res(fit: u32, sms: u32) -> Residency {
        Residency { fit, sms, cluster: None }
    }

    fn courses(cs: Vec<Course>) -> BTreeMap<u32, Course> {
        cs.into_iter().enumerate().map(|(i, c)| (i as u32, c)).collect()
    }

    #[test]
    fn a_cooperative_grid_starts_together_and_leaves_its_barrier_together() {
        // Block 1 arrives last, at 9: everyone leaves at 9; block 0 then adds the partials.
        let cs = courses(vec![course(&[5, 4], true), course(&[9, 0], true), course(&[7, 0], true)]);
        let t = lay_out(&cs, res(4, 2));
        assert!(t.iter().all(|b| b.start == 0 && b.leave == Some(9)), "{t:?}");
        assert_eq!(t.iter().map(|b| b.arrive.unwrap()).collect::<Vec<_>>(), [5, 9, 7]);
        assert_eq!(t.iter().map(|b| b.end.unwrap()).collect::<Vec<_>>(), [13, 9, 9]);
        assert_eq!(t.iter().map(|b| b.place).collect::<Vec<_>>(), [0, 1, 0]);
    }

    #[test]
    fn more_blocks_than_fit_run_in_waves_on_the_slots_that_free_first() {
        let cs = courses((0..7).map(|_| course(&[10], true)).collect());
        let t = lay_out(&cs, res(3, 3));
        assert_eq!(t.iter().map(|b| b.start).collect::<Vec<_>>(), [0, 0, 0, 10, 10, 10, 20]);
        assert_eq!(t[6].end, Some(30));
    }

    #[test]
    fn blocks_waiting_for_ever_keep_their_slots_and_the_rest_never_start() {
        // An ordinary launch with a grid barrier: two slots, both held at the barrier.
        let cs = courses(vec![course(&[4], false), course(&[6], false)]);
        let t = lay_out(&cs, res(2, 1));
        assert_eq!(t.iter().map(|b| (b.start, b.arrive, b.end)).collect::<Vec<_>>(), [(0, Some(4), None), (0, Some(6), None)]);
    }

    #[test]
    fn a_cluster_leaves_its_barrier_when_its_own_last_block_arrives() {
        // Clusters of 2: blocks 0, 1 arrive at 3 and 8; blocks 2, 3 at 5 and 4.
        let c = |a: u64, rest: u64| Course { pieces: vec![(a, Stop::Cluster), (rest, Stop::End)], done: true, unfinished: 0 };
        let cs = courses(vec![c(3, 1), c(8, 1), c(5, 2), c(4, 2)]);
        let t = lay_out(&cs, Residency { fit: 4, sms: 4, cluster: Some(2) });
        assert_eq!(t.iter().map(|b| (b.cluster_arrive.unwrap(), b.cluster_leave.unwrap())).collect::<Vec<_>>(), [(3, 8), (8, 8), (5, 5), (4, 5)]);
        assert_eq!(t.iter().map(|b| b.end.unwrap()).collect::<Vec<_>>(), [9, 9, 7, 7]);
        assert!(t.iter().all(|b| b.arrive.is_none()));
        // A second barrier: the last one's times are kept, as for grid.sync().
        let c2 = |a: u64, b: u64| Course { pieces: vec![(1, Stop::Cluster), (a, Stop::Cluster), (b, Stop::End)], done: true, unfinished: 0 };
        let t = lay_out(&courses(vec![c2(6, 1), c2(0, 1)]), Residency { fit: 2, sms: 2, cluster: Some(2) });
        assert_eq!(
            t.iter().map(|b| (b.cluster_arrive, b.cluster_leave, b.end)).collect::<Vec<_>>(),
            [(Some(7), Some(7), Some(8)), (Some(1), Some(7), Some(8))]
        );
    }
}
