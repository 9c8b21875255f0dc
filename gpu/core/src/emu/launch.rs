//! One emulated launch: a worker thread per core, each running whole blocks
//! (all of a block's threads on one worker), the grid barrier between blocks,
//! and global memory as the blocks see it.
//!
//! Global memory follows a rule a GPU allows and makes the emulator
//! deterministic: a block sees its own writes at once and other blocks'
//! writes only after the next `grid.sync()` (or in a later launch). So what
//! a block computes depends on its inputs, never on how the workers happened
//! to interleave, and the same flags give the same bits with any number of
//! cores. Two blocks touching the same word between grid barriers, one of
//! them writing, is reported as a race, as soon as every block has reached
//! the barrier or finished; among several faults, the lowest block's is
//! reported, so that the report does not depend on timing either.

use super::clock;
use super::fault::{Access, Fault, Site, count, ranges};
use super::info::{LaunchInfo, quiet_kernel_panics};
use super::scheduler::{BlockRun, Outcome};
use super::spec::{Arg, Device, Launch, LaunchStats, Options};
use super::stack::Slots;
use super::timeline::{self, Course, Residency};
use crate::cg::barrier::{arrival, released};
use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Condvar, Mutex};
use std::time::Instant;

/// The grid barrier and what the blocks have reported.
#[derive(Default)]
struct GridState {
    /// Blocks handed to workers so far.
    next: u32,
    /// Blocks a worker is running now.
    running: u32,
    max_running: u32,
    /// Completed grid barriers.
    generation: u32,
    /// The grid barrier's word, run with `grid.sync()`'s own arithmetic
    /// (`cg::barrier`): zero at launch, as the driver hands it over; each
    /// parked block adds its arrival, and the barrier completes when the top
    /// bit flips. `barrier_start` is the word when the current barrier began.
    word: u32,
    barrier_start: u32,
    /// Blocks parked at the current grid barrier.
    arrived: u32,
    /// Where they wait.
    site: Option<String>,
    done: Vec<u32>,
    faults: BTreeMap<u32, Fault>,
    /// This phase's writes to `Out` buffers: the block that wrote each word, where, and the bits.
    writes: BTreeMap<(u32, usize), (BlockAccess, u64)>,
    /// This phase's reads from `Out` buffers (of words the reader had not written): the readers.
    reads: BTreeMap<(u32, usize), Vec<BlockAccess>>,
    /// Two blocks that touched one word in this phase: (slot, index), the writer, the other, what the other did.
    races: BTreeMap<(u32, usize), (BlockAccess, BlockAccess, Access)>,
    /// Resident places taken by the blocks holding them (what `%smid` reads).
    places: BTreeMap<u32, u32>,
    /// Places no block holds now, below `next_place`.
    free_places: std::collections::BTreeSet<u32>,
    next_place: u32,
    /// Each started block's course, in its own memory accesses (for traces).
    courses: BTreeMap<u32, Course>,
    finished: Option<Result<(), Fault>>,
}

/// A block's access to a word of an `Out` buffer: the block, and where in the source.
#[derive(Clone, Copy, Debug)]
struct BlockAccess {
    block: u32,
    site: Site,
}

struct Grid<'a> {
    info: LaunchInfo<'a>,
    state: Mutex<GridState>,
    cv: Condvar,
}

/// Runs `launch` to completion on `device`.
pub(crate) fn run(device: &Device, launch: &Launch, options: &Options) -> Result<LaunchStats, Fault> {
    let (grid, threads) = (launch.grid, launch.threads);
    if grid == 0 {
        return Err(Fault::InvalidValue("a grid of 0 blocks".into()));
    }
    if threads == 0 || threads > device.max_threads_per_block {
        return Err(Fault::InvalidValue(format!("{threads} threads per block; this device runs 1 to {}", device.max_threads_per_block)));
    }
    let per_sm = device.blocks_per_sm_using(threads, launch.shared_bytes, launch.registers_per_thread);
    if per_sm == 0 {
        return Err(Fault::InvalidValue(format!(
            "one block of {threads} threads and {} bytes of shared memory does not fit on an SM of {} threads and {} bytes",
            launch.shared_bytes, device.threads_per_sm, device.shared_bytes_per_sm
        )));
    }
    let fit = per_sm * device.sms;
    if launch.cooperative && grid > fit {
        return Err(Fault::CooperativeLaunchTooLarge { requested: grid, max: fit });
    }
    quiet_kernel_panics();
    let g = Grid {
        info: LaunchInfo {
            launch,
            seed: options.seed,
            timeout_s: options.timeout.as_secs_f64(),
            workspace_always: options.ordinary_launches_get_a_workspace,
            fit,
            deadline: Instant::now() + options.timeout,
            abort: AtomicBool::new(false),
        },
        state: Mutex::new(GridState::default()),
        cv: Condvar::new(),
    };
    let workers = options.workers.clamp(1, grid as usize);
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| worker(&g));
        }
    });
    let st = g.state.into_inner().expect("no worker panics holding the lock");
    if let Some(sink) = launch.trace {
        let laid_out = timeline::lay_out(&st.courses, st.generation, Residency { fit, sms: device.sms });
        sink.lock().unwrap_or_else(|e| e.into_inner()).extend(laid_out);
    }
    st.finished.expect("the launch finishes before its workers return").map(|()| LaunchStats { max_resident: st.max_running, workers })
}

fn worker(g: &Grid) {
    let slots = match Slots::new(g.info.launch.threads as usize) {
        Ok(s) => s,
        Err(e) => {
            let mut st = g.state.lock().unwrap();
            st.finished.get_or_insert(Err(Fault::Resources(format!("stacks for {} threads: {e}", g.info.launch.threads))));
            g.cv.notify_all();
            return;
        }
    };
    let mut parked: Vec<BlockRun> = Vec::new();
    loop {
        let mut run = {
            let mut st = g.state.lock().unwrap();
            loop {
                if st.finished.is_some() {
                    return;
                }
                if let Some(i) = parked.iter().position(|b| released(b.arrived_at, st.word)) {
                    let mut b = parked.swap_remove(i);
                    b.release(&slots);
                    break b;
                }
                // A block starts only where the device has room for it, as in an
                // ordinary launch larger than the device (a cooperative one fits).
                let resident = st.next - st.done.len() as u32 - st.faults.len() as u32;
                if st.next < g.info.launch.grid && resident < g.info.fit {
                    let id = st.next;
                    st.next += 1;
                    let place = match st.free_places.pop_first() {
                        Some(p) => p,
                        None => {
                            st.next_place += 1;
                            st.next_place - 1
                        }
                    };
                    st.places.insert(id, place);
                    st.courses.insert(id, Course::default());
                    break BlockRun::new(id, place, &g.info);
                }
                st = g.cv.wait(st).unwrap();
            }
        };
        {
            let mut st = g.state.lock().unwrap();
            st.running += 1;
            st.max_running = st.max_running.max(st.running);
        }
        let outcome = run.run(&slots);
        let mut st = g.state.lock().unwrap();
        st.running -= 1;
        let id = run.block.id;
        let stretch = clock::take_steps();
        if let Some(c) = st.courses.get_mut(&id) {
            c.segments.push(stretch);
            c.done = matches!(outcome, Outcome::Done);
        }
        if !matches!(outcome, Outcome::Parked)
            && let Some(place) = st.places.remove(&id)
        {
            st.free_places.insert(place);
        }
        match outcome {
            Outcome::Parked => {
                contribute(&mut st, &run);
                st.arrived += 1;
                if st.site.is_none() {
                    st.site = run.site.map(|s| s.to_string());
                }
                run.arrived_at = st.word;
                st.word = st.word.wrapping_add(arrival(id == 0, g.info.launch.grid));
                parked.push(run);
            }
            Outcome::Done => {
                contribute(&mut st, &run);
                st.done.push(id);
                // Room on the device for a waiting block.
                g.cv.notify_all();
            }
            Outcome::Faulted(f) => {
                st.faults.insert(id, f);
                g.cv.notify_all();
            }
        }
        settle(g, &mut st);
    }
}

/// Adds a block's reads and writes in this phase to the grid's, noting any
/// word another block also touched.
fn contribute(st: &mut GridState, run: &BlockRun) {
    let id = run.block.id;
    let global = run.block.global.borrow();
    for (&key, &(bits, site)) in &global.writes {
        let me = BlockAccess { block: id, site };
        if let Some(&(other, _)) = st.writes.get(&key) {
            let (first, second) = if other.block < id { (other, me) } else { (me, other) };
            st.races.entry(key).or_insert((first, second, Access::Write));
        } else if let Some(readers) = st.reads.get(&key)
            && let Some(&reader) = readers.iter().min_by_key(|r| r.block)
        {
            st.races.entry(key).or_insert((me, reader, Access::Read));
        }
        st.writes.insert(key, (me, bits));
    }
    for (&key, &site) in &global.reads {
        let me = BlockAccess { block: id, site };
        if let Some(&(writer, _)) = st.writes.get(&key)
            && writer.block != id
        {
            st.races.entry(key).or_insert((writer, me, Access::Read));
        }
        st.reads.entry(key).or_default().push(me);
    }
}

/// Moves the launch on once every block has reported: completes the grid
/// barrier, or ends the launch with its result.
fn settle(g: &Grid, st: &mut GridState) {
    let grid = g.info.launch.grid;
    // Blocks wait at the grid barrier in every place the device has, and the
    // rest can never start: what an ordinary launch with a grid barrier does
    // on a GPU (see `Options::ordinary_launches_get_a_workspace`).
    if st.next < grid && st.running == 0 && st.arrived > 0 && st.arrived == st.next - st.done.len() as u32 - st.faults.len() as u32 && st.arrived == g.info.fit
    {
        st.finished = Some(Err(Fault::Deadlock(format!(
            "in {}, {} hold every place on the device and wait at {}, and the other {} can never start: a grid barrier needs every block resident at once, which only a cooperative launch of a grid that fits arranges",
            g.info.launch.kernel,
            count(st.arrived as usize, "block"),
            st.site.as_deref().unwrap_or("grid.sync()"),
            count((grid - st.next) as usize, "block")
        ))));
        g.cv.notify_all();
        return;
    }
    let settled = st.next == grid && st.running == 0 && st.arrived + st.done.len() as u32 + st.faults.len() as u32 == grid;
    if !settled {
        return;
    }
    let result = if let Some((_, f)) = st.faults.iter().next() {
        Err(f.clone())
    } else if let Some((&(slot, index), &(writer, other, access))) = st.races.iter().next() {
        let name = g.info.launch.args.iter().find_map(|a| match a {
            Arg::Out { name, slot: s, .. } if *s == slot => Some(*name),
            _ => None,
        });
        Err(Fault::BlockRace {
            word: format!("{}[{index}]", name.unwrap_or("?")),
            writer: writer.block,
            writer_site: writer.site,
            other: other.block,
            other_site: other.site,
            other_access: access,
        })
    } else if st.arrived == 0 {
        publish(&g.info, st);
        Ok(())
    } else if released(st.barrier_start, st.word) {
        // The word flips exactly when the last of the grid's blocks arrives.
        debug_assert_eq!(st.arrived, grid, "the barrier word flipped before every block arrived");
        publish(&g.info, st);
        st.generation += 1;
        st.barrier_start = st.word;
        st.arrived = 0;
        st.site = None;
        g.cv.notify_all();
        return;
    } else {
        let mut exited = st.done.clone();
        exited.sort_unstable();
        Err(Fault::Deadlock(format!(
            "in {}, {} of {} reached {}; {} {} exited without it",
            g.info.launch.kernel,
            st.arrived,
            count(grid as usize, "block"),
            st.site.as_deref().unwrap_or("grid.sync()"),
            if exited.len() == 1 { "block" } else { "blocks" },
            ranges(exited)
        )))
    };
    st.finished = Some(result);
    g.cv.notify_all();
}

/// Writes this phase's buffered writes to memory, in order, and starts a new phase.
fn publish(info: &LaunchInfo, st: &mut GridState) {
    for (&(slot, index), &(_, bits)) in &st.writes {
        let (address, elem) = info
            .launch
            .args
            .iter()
            .find_map(|a| match *a {
                Arg::Out { address, elem, slot: s, .. } if s == slot => Some((address, elem)),
                _ => None,
            })
            .expect("every write is to an Out argument");
        let p = address + index * elem;
        // SAFETY: `index` was bounds-checked against the argument when it was
        // written; every block is parked or done, so nothing reads this memory
        // now, and only this launch touches an `Out` buffer.
        unsafe {
            match elem {
                8 => (p as *mut u64).write_unaligned(bits),
                _ => (p as *mut u32).write_unaligned(bits as u32),
            }
        }
    }
    st.writes.clear();
    st.reads.clear();
}
