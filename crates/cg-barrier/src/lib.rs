//! The grid barrier of [cg-kernel](https://docs.rs/cg-kernel) (`grid.sync()`,
//! the C++ `this_grid().sync()`): its protocols, their arithmetic, and which
//! one a launch runs ([`is_watched`], the one place that choice is made, for
//! the host and the emulator alike). A crate of its own, with no
//! dependencies and no `std` on the GPU, because the GPU code (cg-kernel) and
//! the emulator (cg-emulator) compute from the same functions; cg-kernel
//! re-exports it as `cg_kernel::cg::barrier`.
//!
//! Where the rest of it is:
//! - the GPU code of both barriers, and the barrier memory a watched launch
//!   brings: cg-kernel's `cg/grid.rs` (`GridGroup::sync`);
//! - the hidden parameter that carries that memory: `#[kernel(cooperative)]`
//!   (`crates/cg-kernel-macros`), documented for any host in `docs/abi.md`;
//! - the host's launch of the chosen entry, and the memory per stream and per
//!   graph node: `crates/cg-launcher/src/device/cuda/` (`kernel.rs`: `CudaKernel::launch_entry`;
//!   `barriers.rs`: `Cuda::watched_barrier`);
//! - the emulator's stepping of either barrier: cg-emulator's `launch.rs`, with
//!   [`watched::Memory`];
//! - the model that checks every interleaving of the watched protocol: the
//!   tests below and `tests/barrier_model.rs`.
//!
//! The single word, as the driver defines it (what the plain entry runs):
//! A cooperative launch gives the kernel a workspace word, `barrier`. At each
//! sync one thread per block adds its [`arrival`] to it with an atomic and
//! keeps the old value; block 0's arrival is chosen so that the arrivals of
//! all `n` blocks add up to exactly `0x8000_0000`. The top bit therefore flips
//! once, when the last block arrives, and the low bits come back to where they
//! started, so the same word serves the next sync with no reset. A block may
//! leave when [`released`] sees the top bit differ from the value it added to;
//! the last block's own add flips it, so `released(old, old + arrival)` tells
//! that block it arrived last.
#![cfg_attr(target_arch = "nvptx64", no_std)]
#![deny(missing_docs)]

/// The bit that flips once per completed barrier.
pub const FLIP: u32 = 0x8000_0000;

/// What a block adds on arriving: 1, except block 0, whose share brings the
/// total of all `num_blocks` arrivals to [`FLIP`].
#[inline(always)]
pub const fn arrival(is_block_zero: bool, num_blocks: u32) -> u32 {
    if is_block_zero { FLIP.wrapping_sub(num_blocks.wrapping_sub(1)) } else { 1 }
}

/// Whether the barrier a block joined when the word read `arrived_at` has
/// completed, now that the word reads `now`.
#[inline(always)]
pub const fn released(arrived_at: u32, now: u32) -> bool {
    (arrived_at ^ now) & FLIP != 0
}

/// How many of `num_blocks` blocks have arrived at the current barrier, from
/// the word's value `now` (block 0's large arrival puts the low bits near 2^31).
#[inline(always)]
pub const fn arrivals(now: u32, num_blocks: u32) -> u32 {
    let low = now & !FLIP;
    if low < (1 << 30) { low } else { low.wrapping_sub(FLIP.wrapping_sub(num_blocks.wrapping_sub(1))).wrapping_add(1) }
}

/// Cooperative launches of more blocks than this run the kernel's watched
/// entry ([`watched`]); smaller ones its plain entry, whose `grid.sync()` is
/// the single word above. The host chooses at launch, by the grid's size: a
/// `#[kernel(cooperative)]` kernel has both entries, `name` and
/// `name__watched`, and the emulator makes the same choice. Measured on an
/// H200 with both entries at every grid (2026-12-02,
/// `records/2026-12-02-h200-per-launch-barrier/barrier.txt`): the word's
/// cost grows with the blocks contending for it (0.94 µs at 132 blocks,
/// 1.19 at 528, 1.85 at 924, 2.18 at 1,056, 8.98 at 4,224); the watched
/// barrier's is about flat, 1.9-2.5 µs from 132 to 4,224 blocks (2.13 at
/// 1,056), so the word wins up to 924 blocks and the watched barrier from
/// 1,056.
pub const WATCHED_ABOVE_BLOCKS: u32 = 960;

/// The suffix of a cooperative kernel's watched entry.
pub const WATCHED_ENTRY_SUFFIX: &str = "__watched";

/// Whether a cooperative grid of `num_blocks` blocks runs the watched entry.
#[inline(always)]
pub const fn is_watched(num_blocks: u32) -> bool {
    num_blocks > WATCHED_ABOVE_BLOCKS
}

/// A cooperative launch's own memory, which the host brings in the hidden
/// last parameter of both entries of a `#[kernel(cooperative)]` kernel
/// (`docs/abi.md`): the watched barrier's lines ([`watched::BYTES`], which
/// only the watched entry uses), then the grid collectives' scratch
/// (cg-kernel's `GridGroup::reduce`, the scans, `select`): a header line
/// whose first word is the number of blocks the scratch has room for, then
/// two slots of [`SLOT_WORDS`](launch_memory::SLOT_WORDS) 8-byte words per
/// block (a reduce of an array of up to that many values sends one word each). Like the barrier's lines, it is
/// the launch's own: no other launch in flight may use it, and the next
/// launch on the same stream takes it as it is.
///
/// Which slot a collective writes: the parity of the grid barriers completed
/// before it, which every block reads alike from the barrier's own memory
/// (the word's top bit, or the watched barrier's epoch), since a barrier
/// cannot complete before the reading block arrives. A block writes its
/// word, then arrives; the words are read after the barrier and before the
/// block arrives at the next one; the slot is written again only after a
/// barrier of the other parity has completed, so after every read of it.
pub mod launch_memory {
    use super::watched;

    /// Where the scratch starts, in bytes from the launch memory's start.
    pub const SCRATCH_OFFSET: u32 = watched::BYTES;

    /// Bytes of the scratch's header line; its first `u32` is the blocks
    /// the slots have room for (0: none, and a collective traps).
    pub const HEADER_BYTES: u32 = watched::LINE_BYTES;

    /// Slots of the scratch, one per barrier parity.
    pub const SLOTS: u32 = 2;

    /// 8-byte words per block in a slot.
    pub const SLOT_WORDS: u32 = 8;

    /// Bytes of a launch's memory whose scratch has room for `blocks` blocks.
    #[inline(always)]
    pub const fn bytes(blocks: u32) -> usize {
        SCRATCH_OFFSET as usize + HEADER_BYTES as usize + (SLOTS * SLOT_WORDS * 8) as usize * blocks as usize
    }

    /// Word `k` of block `block` in slot `slot`, counted in 8-byte words from
    /// the start of the launch memory, for scratch with room for `capacity`
    /// blocks.
    #[inline(always)]
    pub const fn word(slot: u32, block: u32, k: u32, capacity: u32) -> usize {
        (SCRATCH_OFFSET + HEADER_BYTES) as usize / 8 + (slot as usize * capacity as usize + block as usize) * SLOT_WORDS as usize + k as usize
    }
}

/// The watched barrier, for grids too large for one word: arrivals are spread
/// over [`watched::COUNTERS`] counters, block 0 watches them all, and releases
/// each counter's group through a flag of its own.
///
/// Memory: `COUNTERS` counters and as many flags, each on its own 128-byte
/// line ([`watched::BYTES`] in all), which the launch brings: the watched
/// entry's last parameter points to it, and no other launch in flight may use
/// it (NVIDIA's barrier word lives in the driver's per-launch workspace for
/// the same reason: two launches that shared it would count each other's
/// arrivals). It starts zeroed; between barriers every counter is 0 and
/// every flag holds the same epoch, and a launch that completes leaves it so,
/// so the next launch on the same stream can take it as it is.
///
/// One barrier, for `n` blocks; block b belongs to group `b % COUNTERS`:
/// 1. Thread 0 of every block reads its group's flag (the epoch `e`; it cannot
///    change before this block arrives), then adds 1 to its group's counter
///    with a release `red` (no value comes back; the block's writes, ordered
///    before it by the block barrier, are released with it).
/// 2. In block 0, thread t takes counters t, t + threads, ...: it reads its
///    flags' epochs, then polls each counter with acquire loads until it
///    holds the group's size. The last value it reads is the last add of a
///    release sequence of that group's adds, so every write any block of the
///    group made before arriving happens before the thread's later accesses.
/// 3. Block 0 synchronizes (a block barrier orders every watcher thread's
///    acquisitions before every other's later accesses), then thread t sets
///    each of its counters back to 0 and stores `e + 1` to its flag with
///    release semantics. The release carries everything block 0 acquired, so
///    a thread that reads the new epoch with an acquire load sees every
///    block's writes from before the barrier.
/// 4. Thread 0 of every other block polls its group's flag with acquire loads
///    until it differs from `e`; the block barrier after passes that on.
///
/// Reuse: the reset of a counter comes before its flag's release in the
/// same thread, so a block that saw the flag and arrives at the next barrier
/// adds to the reset counter, never to the old count. Flags only move on
/// (wrapping is harmless: a block waits for a change, not for a value).
/// Nobody can pass a barrier before all `n` have added to their counters,
/// because block 0 releases nobody before every counter holds its group's
/// size, and sizes add up to `n`. A launch that traps mid-barrier leaves
/// counters behind, but a trap also ends the context and its memory.
pub mod watched {
    /// Counters, and flags: one per thread of block 0's first warp.
    pub const COUNTERS: u32 = 32;

    /// Bytes of each counter's and each flag's line (and the memory's alignment).
    pub const LINE_BYTES: u32 = 128;

    /// Bytes of one launch's barrier memory: `COUNTERS` counter lines, then
    /// `COUNTERS` flag lines; counter f is the first word of line f, flag f
    /// the first word of line `COUNTERS + f`.
    pub const BYTES: u32 = 2 * COUNTERS * LINE_BYTES;

    /// The group, counter and flag of block `block`.
    ///
    /// # Panics
    /// If `counters` is 0 (the protocol has [`COUNTERS`]).
    #[inline(always)]
    pub const fn group(block: u32, counters: u32) -> u32 {
        block % counters
    }

    /// Blocks in group `g` of a grid of `n` blocks.
    ///
    /// # Panics
    /// If `counters` is 0 (the protocol has [`COUNTERS`]).
    #[inline(always)]
    pub const fn group_size(g: u32, n: u32, counters: u32) -> u32 {
        n / counters + if g < n % counters { 1 } else { 0 }
    }

    /// Whether the barrier joined at epoch `joined` has completed, now that
    /// the group's flag reads `now`.
    #[inline(always)]
    pub const fn released(joined: u32, now: u32) -> bool {
        now != joined
    }

    /// What block 0 stores to every flag to release the barrier joined at `joined`.
    #[inline(always)]
    pub const fn next_epoch(joined: u32) -> u32 {
        joined.wrapping_add(1)
    }

    /// The watched barrier's memory, as the emulator and the model in this
    /// module's tests keep it: each step below is one of the protocol's
    /// memory operations, with the GPU's own arithmetic.
    ///
    /// # Panics
    /// Each step but [`arrivals`](Memory::arrivals) panics on memory of 0
    /// counters (as [`group`] does), and a step given a counter `f` past the
    /// memory's panics as an index out of bounds.
    #[cfg(not(target_arch = "nvptx64"))]
    #[derive(Clone, Debug, PartialEq, Eq, Hash)]
    pub struct Memory {
        /// The arrival counters, one per barrier.
        pub counters: Vec<u32>,
        /// The release flags, one per barrier.
        pub flags: Vec<u32>,
    }

    #[cfg(not(target_arch = "nvptx64"))]
    impl Memory {
        /// Barrier memory for `counters` barriers, zeroed.
        pub fn new(counters: u32) -> Memory {
            Memory { counters: vec![0; counters as usize], flags: vec![0; counters as usize] }
        }

        fn c(&self) -> u32 {
            self.counters.len() as u32
        }

        /// Step 1 for `block`: the epoch it joins at.
        pub fn arrive(&mut self, block: u32) -> u32 {
            let g = group(block, self.c()) as usize;
            let joined = self.flags[g];
            self.counters[g] = self.counters[g].wrapping_add(1);
            joined
        }

        /// Step 2 for counter `f`: whether its group has all arrived.
        pub fn counter_full(&self, f: u32, n: u32) -> bool {
            self.counters[f as usize] == group_size(f, n, self.c())
        }

        /// Step 3 for counter `f`: reset it, and move its flag on from the
        /// epoch it holds (as the GPU's watcher thread reads it).
        pub fn reset_and_release(&mut self, f: u32) {
            self.counters[f as usize] = 0;
            self.flags[f as usize] = next_epoch(self.flags[f as usize]);
        }

        /// Step 4 for `block`, joined at `joined`.
        pub fn released(&self, block: u32, joined: u32) -> bool {
            released(joined, self.flags[group(block, self.c()) as usize])
        }

        /// Steps 2 and 3 by block 0 at once, as the emulator runs them (it
        /// moves a block on only when nothing else can move): whether it
        /// released the barrier.
        pub fn watch(&mut self, n: u32) -> bool {
            if !(0..self.c()).all(|f| self.counter_full(f, n)) {
                return false;
            }
            (0..self.c()).for_each(|f| self.reset_and_release(f));
            true
        }

        /// Blocks that have arrived at the current barrier (for a report).
        pub fn arrivals(&self) -> u32 {
            self.counters.iter().sum()
        }
    }
}

/// Nanoseconds a diagnosing `grid.sync()` waits before giving up.
pub const TIMEOUT_NS: u64 = 2_000_000_000;

/// Marks a filled-in [`Report`] (the first word of the report buffer).
pub const REPORT_MAGIC: u32 = 0x6721_5ace;

/// What a diagnosing `grid.sync()` records before it traps, as four `u32`:
/// magic, the block that gave up, blocks arrived, blocks expected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Report {
    /// The block that gave up.
    pub block: u32,
    /// Blocks that had arrived.
    pub arrived: u32,
    /// Blocks the barrier waited for.
    pub expected: u32,
}

impl Report {
    /// Reads a report buffer; `None` unless the magic word is there.
    pub fn from_words(w: [u32; 4]) -> Option<Report> {
        (w[0] == REPORT_MAGIC).then_some(Report { block: w[1], arrived: w[2], expected: w[3] })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrivals_count_every_order_of_arrival() {
        for n in [1u32, 2, 7, 1056] {
            for generation_start in [0, FLIP] {
                // Block 0 first, last, and in the middle.
                for zero_at in [0, n / 2, n - 1] {
                    let mut word = generation_start;
                    let mut arrived = 0;
                    for k in 0..n {
                        let is_zero = k == zero_at;
                        word = word.wrapping_add(arrival(is_zero, n));
                        arrived += 1;
                        if arrived < n {
                            assert_eq!(arrivals(word, n), arrived, "n={n} zero_at={zero_at} k={k}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn a_report_needs_its_magic_word() {
        assert_eq!(Report::from_words([REPORT_MAGIC, 3, 1055, 1056]), Some(Report { block: 3, arrived: 1055, expected: 1056 }));
        assert_eq!(Report::from_words([0, 3, 1055, 1056]), None);
    }

    /// Runs `generations` barriers of `n` blocks arriving in `order`, checking
    /// after every arrival that nobody is released early and, after the last,
    /// that everybody is; and that an arrival's own add shows it was the last
    /// exactly when it was (what lets the last block skip its polls).
    fn run_barriers(n: u32, order: &[u32], generations: u32) {
        let mut word = 0u32;
        for _ in 0..generations {
            let mut arrived_at = Vec::new();
            for (k, &block) in order.iter().enumerate() {
                arrived_at.push(word);
                let share = arrival(block == 0, n);
                word = word.wrapping_add(share);
                let everyone_in = k + 1 == order.len();
                let old = arrived_at[k];
                assert_eq!(
                    released(old, old.wrapping_add(share)),
                    everyone_in,
                    "the add itself tells the last block, and only it: n={n} order={order:?} at {k}"
                );
                for &old in &arrived_at {
                    assert_eq!(released(old, word), everyone_in, "n={n} order={order:?} after {k}");
                }
            }
            assert_eq!(word & !FLIP, 0, "low bits return to zero");
        }
    }

    #[test]
    fn arrivals_of_all_blocks_add_up_to_one_flip() {
        for n in [1u32, 2, 3, 160, 1056, 1 << 20] {
            let total = (0..n).fold(0u32, |w, b| w.wrapping_add(arrival(b == 0, n)));
            assert_eq!(total, FLIP, "n = {n}");
        }
    }

    #[test]
    fn no_block_is_released_before_the_last_arrives_in_any_order() {
        fn permutations(items: Vec<u32>) -> Vec<Vec<u32>> {
            if items.len() <= 1 {
                return vec![items];
            }
            let mut all = Vec::new();
            for i in 0..items.len() {
                let mut rest = items.clone();
                let first = rest.remove(i);
                for mut p in permutations(rest) {
                    p.insert(0, first);
                    all.push(p);
                }
            }
            all
        }
        for n in 1..=5u32 {
            for order in permutations((0..n).collect()) {
                run_barriers(n, &order, 3);
            }
        }
    }

    /// The watched protocol as memory operations that interleave in every
    /// order: each block's arrival (step 1), each watcher thread's poll
    /// success on one counter (step 2), block 0's block barrier (step 3's
    /// start: every counter seen full), each counter's reset and flag
    /// release (step 3), and each waiting block's successful poll (step 4).
    /// Checks that no block leaves before every block has arrived, that
    /// some step can always move until all blocks have passed every barrier
    /// (no deadlock), and that between barriers the counters are 0 and the
    /// flags equal.
    mod watched_model {
        use super::super::watched::{Memory, group, group_size};
        use std::collections::HashSet;

        #[derive(Clone, PartialEq, Eq, Hash, Debug)]
        struct State {
            mem: Memory,
            /// Per block: barriers passed, and the epoch joined (None: not arrived).
            passed: Vec<u32>,
            joined: Vec<Option<u32>>,
            /// Block 0's watcher: counters seen full, whether its block
            /// barrier is behind it, counters released.
            seen: Vec<bool>,
            synced: bool,
            released: Vec<bool>,
        }

        struct Model {
            n: u32,
            c: u32,
            barriers: u32,
            visited: HashSet<State>,
            finals: usize,
        }

        impl Model {
            fn explore(&mut self, s: State) {
                if !self.visited.insert(s.clone()) {
                    return;
                }
                let (n, c) = (self.n, self.c);
                for f in 0..c {
                    assert!(s.mem.counters[f as usize] <= group_size(f, n, c), "n={n} c={c}: counter {f} past its group's size: {s:?}");
                }
                let mut moved = false;
                let mut next = |m: &mut Model, t: State| {
                    moved = true;
                    m.explore(t);
                };
                for b in 0..n {
                    let bi = b as usize;
                    match s.joined[bi] {
                        None if s.passed[bi] < self.barriers => {
                            // Block 0 arrives only with its watcher at rest.
                            if b == 0 && (s.synced || s.seen.iter().any(|&x| x)) {
                                continue;
                            }
                            let mut t = s.clone();
                            t.joined[bi] = Some(t.mem.arrive(b));
                            next(self, t);
                        }
                        Some(joined) if b != 0 && s.mem.released(b, joined) => {
                            let arrived_all = s.passed.iter().zip(&s.joined).all(|(&p, j)| p > s.passed[bi] || j.is_some());
                            assert!(arrived_all, "n={n} c={c}: block {b} left barrier {} before all arrived: {s:?}", s.passed[bi]);
                            let mut t = s.clone();
                            t.joined[bi] = None;
                            t.passed[bi] += 1;
                            next(self, t);
                        }
                        _ => {}
                    }
                }
                if s.joined[0].is_some() {
                    for f in 0..c {
                        let fi = f as usize;
                        if !s.seen[fi] && s.mem.counter_full(f, n) {
                            let mut t = s.clone();
                            t.seen[fi] = true;
                            next(self, t);
                        }
                        if s.synced && !s.released[fi] {
                            let mut t = s.clone();
                            t.mem.reset_and_release(f);
                            t.released[fi] = true;
                            next(self, t);
                        }
                    }
                    if !s.synced && s.seen.iter().all(|&x| x) {
                        let mut t = s.clone();
                        t.synced = true;
                        next(self, t);
                    }
                    if s.released.iter().all(|&x| x) {
                        let arrived_all = s.passed.iter().zip(&s.joined).all(|(&p, j)| p > s.passed[0] || j.is_some());
                        assert!(arrived_all, "n={n} c={c}: block 0 left before all arrived: {s:?}");
                        let mut t = s.clone();
                        t.joined[0] = None;
                        t.passed[0] += 1;
                        t.seen.iter_mut().for_each(|x| *x = false);
                        t.released.iter_mut().for_each(|x| *x = false);
                        t.synced = false;
                        next(self, t);
                    }
                }
                if !moved {
                    assert!(s.passed.iter().all(|&p| p == self.barriers), "n={n} c={c}: deadlock in {s:?}");
                    assert!(s.mem.counters.iter().all(|&x| x == 0), "counters back to 0: {s:?}");
                    assert!(s.mem.flags.iter().all(|&x| x == self.barriers), "every flag moved once per barrier: {s:?}");
                    self.finals += 1;
                }
            }
        }

        #[test]
        fn every_interleaving_of_up_to_5_blocks_and_3_barriers_passes_nobody_early_and_never_deadlocks() {
            for c in 1..=3u32 {
                for n in 1..=5u32 {
                    let mut m = Model { n, c, barriers: 3, visited: HashSet::new(), finals: 0 };
                    let cu = c as usize;
                    let start = State {
                        mem: Memory::new(c),
                        passed: vec![0; n as usize],
                        joined: vec![None; n as usize],
                        seen: vec![false; cu],
                        synced: false,
                        released: vec![false; cu],
                    };
                    m.explore(start);
                    assert_eq!(m.finals, 1, "n={n} c={c}: one final state");
                    assert!(m.visited.len() > n as usize * 3, "n={n} c={c}: the model moved");
                }
            }
        }

        #[test]
        fn groups_cover_every_block_once_at_every_size() {
            for c in [1u32, 3, 32] {
                for n in [1u32, 2, 31, 32, 33, 1281, 4224] {
                    let total: u32 = (0..c).map(|g| group_size(g, n, c)).sum();
                    assert_eq!(total, n);
                    for b in [0, n / 2, n - 1] {
                        assert!(group(b, c) < c);
                    }
                }
            }
        }

        #[test]
        fn the_flags_wrap_past_2_to_the_32_without_releasing_anyone_early() {
            // Flags only move on, so after 2^32 barriers they wrap; a block
            // waits for a change from the epoch it joined at, never for a value.
            let (n, c) = (5u32, 2u32);
            let mut m = Memory::new(c);
            m.flags.iter_mut().for_each(|f| *f = u32::MAX - 1);
            for _ in 0..3 {
                let joined: Vec<u32> = (0..n).map(|b| m.arrive(b)).collect();
                assert!((0..n).all(|b| !m.released(b, joined[b as usize])));
                assert_eq!(m.arrivals(), n);
                assert!(m.watch(n));
                assert!((0..n).all(|b| m.released(b, joined[b as usize])), "every block, once block 0 has watched");
                assert_eq!(m.arrivals(), 0);
            }
            assert_eq!(m.flags, vec![1, 1], "u32::MAX - 1, u32::MAX, 0, 1");
        }

        #[test]
        fn a_barrier_without_block_0_or_with_a_block_missing_never_releases() {
            for missing in [0u32, 3] {
                let mut m = Memory::new(2);
                for b in (0..5).filter(|&b| b != missing) {
                    m.arrive(b);
                }
                assert!(!m.watch(5), "missing block {missing}");
                assert_eq!(m.arrivals(), 4);
            }
        }
    }

    #[test]
    fn the_barrier_is_reusable_at_the_h200_cooperative_maximum() {
        let n = 1056;
        let forward: Vec<u32> = (0..n).collect();
        let backward: Vec<u32> = (0..n).rev().collect();
        run_barriers(n, &forward, 4);
        run_barriers(n, &backward, 4);
    }
}
