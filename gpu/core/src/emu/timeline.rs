//! A traced launch's picture in the emulated device's own time, not the
//! CPU's: each block's course is the memory accesses it made between its
//! start, its grid barriers and its end, laid out as the emulated GPU would
//! run them. Blocks start in order on the SM slot that frees first (all at
//! once when they fit), resident blocks advance together, and a grid barrier
//! completes when its last block arrives. How the CPU's workers happened to
//! take the blocks leaves no mark.

use super::spec::BlockTrace;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

/// One block's record, as the launch kept it.
#[derive(Clone, Debug, Default)]
pub(crate) struct Course {
    /// Memory accesses in each stretch: start to the first grid barrier,
    /// between barriers, the last barrier to the end.
    pub segments: Vec<u64>,
    /// It returned (not parked at a barrier for ever, nor faulted).
    pub done: bool,
}

/// The device's residency: `fit` blocks at once, on `sms` SMs.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Residency {
    pub fit: u32,
    pub sms: u32,
}

/// Each started block's trace: its place is the emulated SM of the slot it
/// got, its times are logical (accesses made by a block, resident blocks in
/// step). `barriers` is the number of grid barriers the launch completed.
pub(crate) fn lay_out(courses: &BTreeMap<u32, Course>, barriers: u32, r: Residency) -> Vec<BlockTrace> {
    let fit = r.fit.max(1);
    let sms = r.sms.max(1);
    // Free slots by the time they free; ties go to the lowest slot, so the
    // first wave spreads round the SMs as a GPU's block scheduler does.
    let mut free: BinaryHeap<Reverse<(u64, u32)>> = (0..fit).map(|s| Reverse((0, s))).collect();
    let mut out: Vec<BlockTrace> = Vec::with_capacity(courses.len());
    // Where each block's next stretch begins, by block.
    let mut at: Vec<u64> = Vec::with_capacity(courses.len());
    for (&block, c) in courses {
        // A block that never returned keeps its slot.
        let Reverse((start, slot)) = free.pop().unwrap_or(Reverse((0, 0)));
        let first = c.segments.first().copied().unwrap_or(0);
        let mut t = BlockTrace { block, place: slot % sms, start, arrive: None, leave: None, end: None };
        if barriers == 0 {
            if c.done {
                t.end = Some(start + first);
                free.push(Reverse((start + first, slot)));
            } else if c.segments.len() == 1 {
                t.arrive = Some(start + first);
            }
        }
        at.push(start);
        out.push(t);
    }
    if barriers > 0 {
        // Every block is resident (the barrier completed): each stretch starts
        // when the barrier before it completes, for every block together.
        for g in 0..=barriers as usize {
            let arrivals: Vec<Option<u64>> = courses.values().zip(&at).map(|(c, &a)| c.segments.get(g).map(|s| a + s)).collect();
            let release = arrivals.iter().flatten().copied().max().unwrap_or(0);
            for ((t, c), (a, arrival)) in out.iter_mut().zip(courses.values()).zip(at.iter_mut().zip(&arrivals)) {
                match (*arrival, g) {
                    (Some(x), g) if c.done && g + 1 == c.segments.len() => t.end = Some(x),
                    (Some(x), 0) => {
                        t.arrive = Some(x);
                        t.leave = Some(release);
                    }
                    _ => {}
                }
                *a = release;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn course(segments: &[u64], done: bool) -> Course {
        Course { segments: segments.to_vec(), done }
    }

    fn courses(cs: Vec<Course>) -> BTreeMap<u32, Course> {
        cs.into_iter().enumerate().map(|(i, c)| (i as u32, c)).collect()
    }

    #[test]
    fn a_cooperative_grid_starts_together_and_leaves_its_barrier_together() {
        // Block 1 arrives last, at 9: everyone leaves at 9; block 0 then adds the partials.
        let cs = courses(vec![course(&[5, 4], true), course(&[9, 0], true), course(&[7, 0], true)]);
        let t = lay_out(&cs, 1, Residency { fit: 4, sms: 2 });
        assert!(t.iter().all(|b| b.start == 0 && b.leave == Some(9)), "{t:?}");
        assert_eq!(t.iter().map(|b| b.arrive.unwrap()).collect::<Vec<_>>(), [5, 9, 7]);
        assert_eq!(t.iter().map(|b| b.end.unwrap()).collect::<Vec<_>>(), [13, 9, 9]);
        assert_eq!(t.iter().map(|b| b.place).collect::<Vec<_>>(), [0, 1, 0]);
    }

    #[test]
    fn more_blocks_than_fit_run_in_waves_on_the_slots_that_free_first() {
        let cs = courses((0..7).map(|_| course(&[10], true)).collect());
        let t = lay_out(&cs, 0, Residency { fit: 3, sms: 3 });
        assert_eq!(t.iter().map(|b| b.start).collect::<Vec<_>>(), [0, 0, 0, 10, 10, 10, 20]);
        assert_eq!(t[6].end, Some(30));
    }

    #[test]
    fn blocks_waiting_for_ever_keep_their_slots_and_the_rest_never_start() {
        // An ordinary launch with a grid barrier: two slots, both held at the barrier.
        let cs = courses(vec![course(&[4], false), course(&[6], false)]);
        let t = lay_out(&cs, 0, Residency { fit: 2, sms: 1 });
        assert_eq!(t.iter().map(|b| (b.start, b.arrive, b.end)).collect::<Vec<_>>(), [(0, Some(4), None), (0, Some(6), None)]);
    }
}
