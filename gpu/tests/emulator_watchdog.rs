//! The emulator tells slow from stuck: a launch slowed far past its
//! timeout (`Options::throttle`, standing for a loaded machine) runs to the
//! end while blocks keep ending or barriers keep completing.

use gpu::cg::{this_grid, this_thread_block, tiled_partition};
use gpu::emu::{Arg, Fault, LaunchStats, Options};
use gpu::kernel;
use gpu::kernels::{Contract, KernelDef, Params};
use gpu::mem::{In, Out, Scope};
use std::time::{Duration, Instant};

mod common;
use common::{DEV, THREADS, input, launch_with, output};

/// Reads per thread between two barriers: a block's 64 threads make 6,400,
/// so each round passes one throttled checkpoint (every 4,096 accesses).
const READS: usize = 100;

/// One second of timeout, and a pause of 50 ms at every checkpoint: each
/// launch below takes about three seconds, and something that counts as
/// progress happens several times a second.
fn throttled() -> Options {
    Options { timeout: Duration::from_secs(1), throttle: Some(Duration::from_millis(50)), workers: 2, ..Options::default() }
}

fn launch<P: Params, C: Contract>(def: &KernelDef<P, C>, grid: u32, cooperative: bool, args: &[Arg], options: Options) -> Result<LaunchStats, Fault> {
    launch_with(&DEV, def, grid, THREADS, cooperative, args, options)
}

/// Each thread adds up `READS` elements and writes the sum: one round, then the block ends.
///
/// # Safety
/// `input` holds `READS` elements; `out` one per thread of the grid.
#[kernel]
unsafe fn add_up(input: In<u32>, out: Out<u32>) {
    let mut sum = 0u32;
    for i in 0..READS {
        sum = sum.wrapping_add(unsafe { input.read(i) });
    }
    unsafe { out.write(this_grid().thread_rank(), sum) };
}

/// `rounds` rounds of `add_up`'s reads, each closed by `block.sync()`.
///
/// # Safety
/// As `add_up`.
#[kernel]
unsafe fn add_up_between_block_barriers(input: In<u32>, out: Out<u32>, rounds: u32) {
    let block = this_thread_block();
    let mut sum = 0u32;
    for _ in 0..rounds {
        for i in 0..READS {
            sum = sum.wrapping_add(unsafe { input.read(i) });
        }
        block.sync();
    }
    unsafe { out.write(this_grid().thread_rank(), sum) };
}

/// `rounds` rounds of `add_up`'s reads, each closed by `grid.sync()`.
///
/// # Safety
/// As `add_up`.
#[kernel(cooperative)]
unsafe fn add_up_between_grid_barriers(input: In<u32>, out: Out<u32>, rounds: u32) {
    let grid = this_grid();
    let mut sum = 0u32;
    for _ in 0..rounds {
        for i in 0..READS {
            sum = sum.wrapping_add(unsafe { input.read(i) });
        }
        grid.sync();
    }
    unsafe { out.write(grid.thread_rank(), sum) };
}

/// Runs `go` and says how long it took, so a failure shows how far past the timeout it got.
fn timed<R>(go: impl FnOnce() -> R) -> (R, f64) {
    let started = Instant::now();
    let r = go();
    (r, started.elapsed().as_secs_f64())
}

#[test]
fn a_slow_launch_of_many_blocks_runs_to_the_end_while_blocks_keep_ending() {
    let xs = vec![1u32; READS];
    let grid = 128;
    let mut out = vec![0u32; (grid * THREADS) as usize];
    let (r, seconds) = timed(|| launch(&ADD_UP, grid, false, &[input("input", &xs), output("out", &mut out, 0)], throttled()));
    println!("{seconds:.2} s");
    r.unwrap_or_else(|f| panic!("after {seconds:.2} s: {f}"));
    assert!(out.iter().all(|&s| s == READS as u32));
    assert!(seconds > 2.0, "the throttle slowed the launch to {seconds:.2} s, past its 1 s timeout");
}

#[test]
fn a_slow_block_runs_to_the_end_while_its_block_barriers_keep_completing() {
    let xs = vec![1u32; READS];
    let rounds = 40;
    let mut out = vec![0u32; THREADS as usize];
    let args = [input("input", &xs), output("out", &mut out, 0), Arg::Value(rounds as u64)];
    let (r, seconds) = timed(|| launch(&ADD_UP_BETWEEN_BLOCK_BARRIERS, 1, false, &args, throttled()));
    println!("{seconds:.2} s");
    r.unwrap_or_else(|f| panic!("after {seconds:.2} s: {f}"));
    assert!(out.iter().all(|&s| s == rounds * READS as u32));
    assert!(seconds > 2.0, "the throttle slowed the launch to {seconds:.2} s, past its 1 s timeout");
}

#[test]
fn a_slow_cooperative_launch_runs_to_the_end_while_its_grid_barriers_keep_completing() {
    let xs = vec![1u32; READS];
    let (grid, rounds) = (8, 16);
    let mut out = vec![0u32; (grid * THREADS) as usize];
    let args = [input("input", &xs), output("out", &mut out, 0), Arg::Value(rounds as u64)];
    let (r, seconds) = timed(|| launch(&ADD_UP_BETWEEN_GRID_BARRIERS, grid, true, &args, throttled()));
    println!("{seconds:.2} s");
    r.unwrap_or_else(|f| panic!("after {seconds:.2} s: {f}"));
    assert!(out.iter().all(|&s| s == rounds * READS as u32));
    assert!(seconds > 2.0, "the throttle slowed the launch to {seconds:.2} s, past its 1 s timeout");
}

/// `rounds` rounds of `reads` reads per thread, each closed by `grid.sync()`.
///
/// # Safety
/// `input` holds `READS` elements; `out` one per thread of the grid.
#[kernel(cooperative)]
unsafe fn reads_between_grid_barriers(input: In<u32>, out: Out<u32>, reads: u32, rounds: u32) {
    let grid = this_grid();
    let mut sum = 0u32;
    for _ in 0..rounds {
        for i in 0..reads as usize {
            sum = sum.wrapping_add(unsafe { input.read(i % READS) });
        }
        grid.sync();
    }
    unsafe { out.write(grid.thread_rank(), sum) };
}

#[test]
fn a_grid_barrier_starts_each_blocks_budget_of_work_again() {
    // Each round is about two thirds of a block's budget of work for a
    // timeout of 0.1 s; the three together are twice it.
    let xs = vec![1u32; READS];
    let (grid, threads, reads, rounds) = (2, 32, 33_000u32, 3);
    // And on a machine so busy that each checkpoint (4,096 accesses) waits
    // 2 ms: the launch then takes several times ten timeouts of wall time,
    // which a backstop in wall time stopped as a loop around grid.sync().
    for (workers, throttle) in [(1, None), (2, None), (1, Some(Duration::from_millis(2)))] {
        let mut out = vec![0u32; (grid * threads) as usize];
        let args = [input("input", &xs), output("out", &mut out, 0), Arg::Value(reads as u64), Arg::Value(rounds as u64)];
        let options = Options { timeout: Duration::from_millis(100), workers, throttle, ..Options::default() };
        let (r, seconds) = timed(|| launch_with(&DEV, &READS_BETWEEN_GRID_BARRIERS, grid, threads, true, &args, options));
        println!("{workers} workers, throttle {throttle:?}: {seconds:.2} s");
        r.unwrap_or_else(|f| panic!("{workers} workers, throttle {throttle:?}, after {seconds:.2} s: {f}"));
        assert!(out.iter().all(|&s| s == rounds * reads), "{workers} workers");
        if throttle.is_some() {
            assert!(seconds > 1.0, "the throttle slowed the launch past ten timeouts ({seconds:.2} s)");
        }
    }
}

// ---- what is truly stuck is still named ----

/// Block 3 loops forever before `grid.sync()`; the others wait there for it.
///
/// # Safety
/// `input` holds one element; `out` one per block.
#[kernel(cooperative)]
unsafe fn one_block_never_arrives(input: In<u32>, out: Out<u32>) {
    let grid = this_grid();
    let block = this_thread_block();
    let mut sum = 0u32;
    if block.group_index().x == 3 {
        while sum != 1 {
            sum = sum.wrapping_add(unsafe { input.read(0) }) & 2;
        }
    }
    grid.sync();
    if block.thread_rank() == 0 {
        unsafe { out.write(block.group_index().x as usize, sum) };
    }
}

#[test]
fn a_block_that_never_reaches_grid_sync_is_named_running_with_the_blocks_that_wait_for_it() {
    for workers in [1, 2] {
        let xs = [1u32];
        let mut out = [0u32; 8];
        let options = Options { timeout: Duration::from_millis(300), workers, ..Options::default() };
        let (r, seconds) = timed(|| launch(&ONE_BLOCK_NEVER_ARRIVES, 8, true, &[input("input", &xs), output("out", &mut out, 0)], options));
        let err = r.expect_err("block 3 never arrives");
        let text = err.to_string();
        println!("{workers} workers, {seconds:.2} s: {text}");
        assert!(matches!(err, Fault::Timeout { .. }), "{text}");
        assert!(
            text.starts_with(
                "no block ended and no barrier completed within the 0.3 s timeout (counted in the emulator's steps of work, not by the clock), while thread 0 of block 3 (warp 0, lane 0) ran on at gpu/tests/emulator_watchdog.rs:"
            ),
            "{text}"
        );
        // With one worker, the blocks after block 3 never start.
        let waited = if workers == 1 {
            " (3 blocks waited at grid.sync() at gpu/tests/emulator_watchdog.rs:"
        } else {
            " (7 blocks waited at grid.sync() at gpu/tests/emulator_watchdog.rs:"
        };
        assert!(text.contains(waited), "{text}");
        assert!(text.ends_with("): an endless loop (an index that never reaches its bound, or steps by 0?), or far more work between barriers than the lesson's kernels do (a loop that steps by 1 where it should stride?)"), "{text}");
        // A budget of steps, not of seconds: about the timeout on an idle machine, more on a loaded one.
        assert!(seconds < 3.0, "named after {seconds:.2} s");
    }
}

/// A loop around `block.sync()` whose index never moves.
///
/// # Safety
/// None needed.
#[kernel]
unsafe fn an_index_that_never_moves_around_block_sync(n: u32) {
    let block = this_thread_block();
    let i = 0;
    #[allow(clippy::while_immutable_condition, reason = "the mistake this kernel makes")]
    while i < n {
        block.sync();
    }
}

#[test]
fn a_loop_around_block_sync_that_never_ends_is_stopped_by_the_backstop_and_named() {
    let options = Options { timeout: Duration::from_millis(300), ..Options::default() };
    let (r, seconds) = timed(|| launch(&AN_INDEX_THAT_NEVER_MOVES_AROUND_BLOCK_SYNC, 1, false, &[Arg::Value(4)], options));
    let err = r.expect_err("the loop never ends");
    let text = err.to_string();
    println!("{seconds:.2} s: {text}");
    assert!(matches!(err, Fault::BarrierLoop { .. }), "{text}");
    // Its block barriers kept resetting its budget; the backstop, ten budgets of work over the block's life, did not.
    let Fault::BarrierLoop { stall, .. } = &err else { unreachable!() };
    assert!(stall.block_barriers > 100, "{text}");
    let head = format!(
        "{} block barriers completed in 3 s of work in block 0, and no block ended: an endless loop around block.sync() at gpu/tests/emulator_watchdog.rs:",
        stall.block_barriers
    );
    assert!(text.starts_with(&head), "{text}");
    assert!(text.ends_with('?'), "{text}");
    // Ten budgets of work, counted in steps: about 3 s on an idle machine,
    // later on a loaded one, never an endless wait.
    assert!(seconds < 30.0, "named after {seconds:.2} s");
}

/// The same endless loop around `block.sync()`, with a warp's worth of
/// shuffles between barriers and no memory touched: the work of a block
/// scan that loops on a ticket that never moves (the persistent scan's
/// mutant). Collectives count as steps, so the backstop comes as soon.
///
/// # Safety
/// None needed.
#[kernel]
unsafe fn shuffles_in_a_loop_around_block_sync(n: u32) {
    let block = this_thread_block();
    let warp = tiled_partition::<32>(&block);
    let i = 0;
    let mut v = warp.thread_rank();
    #[allow(clippy::while_immutable_condition, reason = "the mistake this kernel makes")]
    while i < n {
        for d in [1, 2, 4, 8, 16, 1, 2, 4, 8, 16] {
            v = v.wrapping_add(warp.shfl_xor(v, d));
        }
        block.sync();
    }
}

#[test]
fn a_loop_of_warp_collectives_around_block_sync_is_stopped_by_the_backstop_as_soon() {
    let options = Options { timeout: Duration::from_millis(300), ..Options::default() };
    let (r, seconds) = timed(|| launch(&SHUFFLES_IN_A_LOOP_AROUND_BLOCK_SYNC, 1, false, &[Arg::Value(4)], options));
    let err = r.expect_err("the loop never ends");
    let text = err.to_string();
    println!("{seconds:.2} s: {text}");
    assert!(matches!(err, Fault::BarrierLoop { .. }), "{text}");
    // Ten budgets of work (3 s of steps on an idle machine); the shuffles
    // count as steps, so they do not stretch it tenfold (26 s when they
    // did not, against 1.7 s for the loop without them).
    assert!(seconds < 10.0, "named after {seconds:.2} s");
}

/// Set once the test has seen the runaway named: the kernel's loop then ends.
static RELEASE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
/// What `on_runaway` was handed.
static TOLD: std::sync::Mutex<Option<(String, String)>> = std::sync::Mutex::new(None);

/// Computes without touching emulated memory or waiting until the test says stop.
///
/// # Safety
/// None needed.
#[kernel]
unsafe fn computes_without_memory() {
    while !RELEASE.load(std::sync::atomic::Ordering::Relaxed) {
        std::hint::spin_loop();
    }
}

#[test]
fn a_thread_that_cannot_be_stopped_is_handed_to_on_runaway_by_name() {
    fn tell(kernel: &str, fault: &Fault) {
        *TOLD.lock().unwrap() = Some((kernel.to_string(), fault.to_string()));
    }
    let options = Options { timeout: Duration::from_millis(300), on_runaway: Some(tell), ..Options::default() };
    let started = Instant::now();
    let running = std::thread::spawn(move || launch(&COMPUTES_WITHOUT_MEMORY, 1, false, &[], options));
    let told = loop {
        if let Some(told) = TOLD.lock().unwrap().take() {
            break told;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "on_runaway was not called");
        std::thread::sleep(Duration::from_millis(10));
    };
    let seconds = started.elapsed().as_secs_f64();
    println!("{seconds:.2} s: {}: {}", told.0, told.1);
    RELEASE.store(true, std::sync::atomic::Ordering::Relaxed);
    assert_eq!(told.0, "computes_without_memory");
    assert_eq!(
        told.1,
        "no block ended and no barrier completed within the 0.3 s timeout (counted in the emulator's steps of work, not by the clock), while block 0 did not stop when told to (a thread that runs without touching memory or waiting, which nothing can interrupt): an endless loop (an index that never reaches its bound, or steps by 0?), or far more work between barriers than the lesson's kernels do (a loop that steps by 1 where it should stride?)"
    );
    // The timeout, then two seconds' grace for the block to stop.
    assert!((2.3..5.0).contains(&seconds), "told after {seconds:.2} s");
    // Once the thread stops by itself, the launch returns, stopped.
    let r = running.join().unwrap();
    println!("then: {r:?}");
    assert!(matches!(r, Err(Fault::Timeout { .. })), "{r:?}");
}

// ---- blocks that wait for each other through memory ----

/// Which block block `b` of `n` waits for, by `order`: 0, block 0 for
/// block 1; 1, block 1 for block 0; 2, each block for the one before it
/// (decoupled look-back's chain); 3, each for the one after it; 4, every
/// block for the last.
fn awaited(order: u32, b: u32, n: u32) -> Option<u32> {
    match order {
        0 => (b == 0).then_some(1),
        1 => (b == 1).then_some(0),
        2 => b.checked_sub(1),
        3 => (b + 1 < n).then_some(b + 1),
        _ => (b + 1 < n).then_some(n - 1),
    }
}

/// What block `b` publishes: `b + 1` plus what the block it waits for published.
fn published(order: u32, b: u32, n: u32) -> u32 {
    b + 1 + awaited(order, b, n).map_or(0, |a| published(order, a, n))
}

/// Every thread of a block polls (`atomic_load`) the flag of the block it
/// waits for (`awaited`) until that block sets it, then thread 0 sets the
/// block's own flag to `published`, atomically, and every thread writes it
/// out. No grid barrier: the blocks wait for each other through the flags.
///
/// # Safety
/// `flags` holds one per block, zero before the launch; `out` one per thread of the grid.
#[kernel]
unsafe fn waits_through_flags(flags: Out<u32>, out: Out<u32>, order: u32) {
    let block = this_thread_block();
    let grid = this_grid();
    let (b, n) = (block.group_index().x, grid.num_blocks() as u32);
    let mut before = 0;
    if let Some(a) = awaited(order, b, n) {
        loop {
            // SAFETY: a < n; flags are touched only atomically.
            before = unsafe { flags.atomic_load(a as usize, Scope::Device) };
            if before != 0 {
                break;
            }
        }
    }
    block.sync();
    if block.thread_rank() == 0 {
        // SAFETY: flags[b] is this block's, touched only atomically.
        unsafe { flags.atomic_store(b as usize, before + b + 1, Scope::Device) };
    }
    // SAFETY: one per thread of the grid; this thread's own.
    unsafe { out.write(grid.thread_rank(), before + b + 1) };
}

#[test]
fn blocks_waiting_for_each_other_through_flags_finish_with_any_number_of_workers() {
    // 8 blocks: every block resident at once, as a cooperative launch needs.
    let grid = 8;
    for (order, what) in [(0, "block 0 for block 1"), (1, "block 1 for block 0"), (2, "each for the one before"), (3, "each for the one after")] {
        for workers in [1, 2, 16] {
            let mut flags = vec![0u32; grid as usize];
            let mut out = vec![0u32; (grid * THREADS) as usize];
            let args = [output("flags", &mut flags, 0), output("out", &mut out, 1), Arg::Value(order as u64)];
            let options = Options { timeout: Duration::from_secs(5), workers, ..Options::default() };
            let (r, seconds) = timed(|| launch(&WAITS_THROUGH_FLAGS, grid, true, &args, options));
            println!("{what}, {workers} workers: {seconds:.2} s");
            r.unwrap_or_else(|f| panic!("{what}, {workers} workers, after {seconds:.2} s: {f}"));
            for b in 0..grid {
                let want = published(order, b, grid);
                assert_eq!(flags[b as usize], want, "{what}, {workers} workers: flags[{b}]");
                let mine = &out[(b * THREADS) as usize..((b + 1) * THREADS) as usize];
                assert!(mine.iter().all(|&v| v == want), "{what}, {workers} workers: block {b} wrote {mine:?}, not {want}");
            }
            assert!(seconds < 3.0, "{what}, {workers} workers: {seconds:.2} s");
        }
    }
}

/// Each thread adds up `reads` elements, with no barrier, and writes the sum.
///
/// # Safety
/// `input` holds `READS` elements; `out` one per thread of the grid.
#[kernel]
unsafe fn reads_without_barriers(input: In<u32>, out: Out<u32>, reads: u32) {
    let mut sum = 0u32;
    for i in 0..reads as usize {
        sum = sum.wrapping_add(unsafe { input.read(i % READS) });
    }
    unsafe { out.write(this_grid().thread_rank(), sum) };
}

#[test]
fn blocks_long_between_progress_run_to_the_end_however_slow_the_machine() {
    // About 3,000,000 reads per block with nothing between them that counts
    // as progress, paused 1 ms at each of their checkpoints: each block
    // runs for twice its timeout of wall time, as on a loaded machine, but
    // its steps are well within the timeout's budget.
    let xs = vec![1u32; READS];
    let (grid, threads, reads) = (2, 32, 93_750u32);
    for workers in [1, 2] {
        let mut out = vec![0u32; (grid * threads) as usize];
        let args = [input("input", &xs), output("out", &mut out, 0), Arg::Value(reads as u64)];
        let options = Options { timeout: Duration::from_millis(500), throttle: Some(Duration::from_millis(1)), workers, ..Options::default() };
        let (r, seconds) = timed(|| launch_with(&DEV, &READS_WITHOUT_BARRIERS, grid, threads, false, &args, options));
        println!("{workers} workers: {seconds:.2} s");
        r.unwrap_or_else(|f| panic!("{workers} workers, after {seconds:.2} s: {f}"));
        assert!(out.iter().all(|&s| s == reads), "{workers} workers");
        assert!(seconds > 0.5 * grid as f64 / workers as f64, "the throttle slowed each block past its timeout: {seconds:.2} s");
    }
}

/// Block 0's thread 0 polls `flags[1]`, which nothing sets.
///
/// # Safety
/// `flags` holds two, zero before the launch.
#[kernel]
unsafe fn polls_a_flag_nothing_sets(flags: Out<u32>) {
    let block = this_thread_block();
    if block.group_index().x == 0 && block.thread_rank() == 0 {
        // SAFETY: flags holds two, touched only atomically.
        while unsafe { flags.atomic_load(1, Scope::Device) } == 0 {}
    }
}

/// The end of a report of blocks that only polled.
const POLLED: &str = ": blocks waiting for a word that no block changes (a flag never set, or set by a block that cannot start until the waiting ones end: a block may wait only for blocks resident with it, as every block of a cooperative launch is)";

#[test]
fn a_poll_of_a_flag_nothing_sets_is_named_with_its_word_and_line() {
    for workers in [1, 2] {
        let mut flags = [0u32; 2];
        let options = Options { timeout: Duration::from_millis(300), workers, ..Options::default() };
        let (r, seconds) = timed(|| launch(&POLLS_A_FLAG_NOTHING_SETS, 2, true, &[output("flags", &mut flags, 0)], options));
        let err = r.expect_err("the flag is never set");
        let text = err.to_string();
        println!("{workers} workers, {seconds:.2} s: {text}");
        assert!(matches!(err, Fault::Timeout { .. }), "{text}");
        assert!(
            text.starts_with(
                "no block ended and no barrier completed within the 0.3 s timeout (counted in the emulator's steps of work, not by the clock), while thread 0 of block 0 (warp 0, lane 0) polled flags[1] at gpu/tests/emulator_watchdog.rs:"
            ),
            "{text}"
        );
        assert!(text.ends_with(&format!(" (1 block had ended){POLLED}")), "{text}");
        assert!(seconds < 3.0, "named after {seconds:.2} s");
    }
}

/// Warp 0 of block 0 waits for `flags[1..4]`, which nothing sets, lanes 0
/// to 2 polling one each and all 32 voting after each poll, as the
/// look-back's warp waits on the tiles before the third (a persistent scan
/// whose block left a tile it took unpublished).
///
/// # Safety
/// `flags` holds 4, zero before the launch.
#[kernel]
unsafe fn a_warp_polls_flags_nothing_sets_with_a_vote_each_time(flags: Out<u32>) {
    let block = this_thread_block();
    let warp = tiled_partition::<32>(&block);
    if block.thread_rank() < 32 {
        let lane = warp.thread_rank() as usize;
        loop {
            // SAFETY: flags holds 4, touched only atomically.
            let set = lane >= 3 || unsafe { flags.atomic_load(1 + lane, Scope::Device) } != 0;
            if warp.all(set) {
                break;
            }
        }
    }
    block.sync();
}

#[test]
fn a_warp_that_polls_and_votes_is_named_as_soon_as_one_that_polls() {
    // Seeded, a run checks for a stop far more often: a check reached by a
    // poll once counted that poll as work, so the polls never added up.
    for (workers, seed) in [(1, None), (2, None), (1, Some(7)), (2, Some(7))] {
        let mut flags = [0u32; 4];
        let options = Options { timeout: Duration::from_millis(300), workers, seed, ..Options::default() };
        let (r, seconds) = timed(|| launch(&A_WARP_POLLS_FLAGS_NOTHING_SETS_WITH_A_VOTE_EACH_TIME, 2, true, &[output("flags", &mut flags, 0)], options));
        let err = r.expect_err("the flags are never set");
        let text = err.to_string();
        // One thread polling alone, on the same machine at the same time.
        let (_, alone) = timed(|| launch(&POLLS_A_FLAG_NOTHING_SETS, 2, true, &[output("flags", &mut [0u32; 2], 0)], options));
        println!("{workers} workers, seed {seed:?}, {seconds:.2} s ({alone:.2} s for one thread alone): {text}");
        assert!(matches!(err, Fault::Timeout { .. }), "{text}");
        assert!(text.ends_with(POLLED), "{text}");
        // The votes count as polls: about as soon as the one thread (three
        // times as long when they did not count).
        assert!(seconds < 2.0 * alone, "named after {seconds:.2} s, against {alone:.2} s for one thread polling alone");
    }
}

#[test]
fn blocks_of_an_ordinary_launch_that_wait_for_a_block_that_cannot_start_are_named() {
    // 9 blocks where the device holds 8: blocks 0-7 wait for block 8, which
    // starts only once one of them ends.
    let grid = 9;
    for workers in [1, 2] {
        let mut flags = vec![0u32; grid as usize];
        let mut out = vec![0u32; (grid * THREADS) as usize];
        let args = [output("flags", &mut flags, 0), output("out", &mut out, 1), Arg::Value(4)];
        let options = Options { timeout: Duration::from_millis(300), workers, ..Options::default() };
        let (r, seconds) = timed(|| launch(&WAITS_THROUGH_FLAGS, grid, false, &args, options));
        let err = r.expect_err("block 8 never starts");
        let text = err.to_string();
        println!("{workers} workers, {seconds:.2} s: {text}");
        assert!(matches!(err, Fault::Timeout { .. }), "{text}");
        assert!(
            text.starts_with(
                "no block ended and no barrier completed within the 0.3 s timeout (counted in the emulator's steps of work, not by the clock), while thread "
            ),
            "{text}"
        );
        assert!(text.contains(" polled flags[8] at gpu/tests/emulator_watchdog.rs:"), "{text}");
        assert!(text.ends_with(&format!(" (1 block had not started){POLLED}")), "{text}");
        assert!(seconds < 3.0, "named after {seconds:.2} s");
    }
}
