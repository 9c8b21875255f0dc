//! A block's memory accesses: shared and global reads and writes, each
//! checked against its bounds and its race shadow, and the spin detector.

use crate::block::Block;
use crate::cluster::Seat;
use crate::fault::{Access, Fault, Site, Touch};
use crate::race::{Now, Shadow, Touched};
use crate::warp::{Poll, Wait};

/// Consecutive reads of one word, with no write or collective between, that count as a spin.
const SPIN_READS: u32 = 1 << 20;

/// Atomics in a row that change nothing and return the same value, after
/// which a thread gives way: few, since giving way only lets others run
/// (a thread that waits for nothing runs again at once), and a block that
/// waits for another should soon let it run.
const POLLS_BEFORE_GIVING_WAY: u32 = 64;

impl Block {
    // ---- memory ----

    pub(crate) fn now(&self, site: Site) -> Touched {
        let tid = self.current.get();
        Touched { thread: tid, epoch: self.epoch.get(), warp_syncs: self.warps[(tid / 32) as usize].borrow().syncs.len() as u32, site, atomic: false }
    }

    /// Checks an access against a word's shadow; the race, if any, to fail with
    /// once no borrow is held.
    pub(crate) fn check(&self, shadow: &mut Shadow, access: Access, site: Site, word: impl Fn() -> String) -> Option<Fault> {
        let syncs = |w: u32| self.warps[w as usize].borrow().syncs.clone();
        let now = Now { block: self.id, touched: Touched { atomic: access == Access::Atomic, ..self.now(site) }, warp_syncs: &syncs };
        match access {
            Access::Read => shadow.read(&now, word),
            Access::Write => shadow.write(&now, word),
            Access::Atomic => shadow.atomic(&now, word),
        }
        .err()
    }

    /// Counts a read of `key`; a thread that reads one word [`SPIN_READS`]
    /// times in a row waits until something in its block writes it.
    pub(crate) fn note_read(&self, key: u64, site: Site, word: impl Fn() -> String) {
        let t = self.thread();
        let (last, n) = t.spin.get();
        let n = if last == key { n + 1 } else { 1 };
        t.spin.set((key, n));
        if n >= SPIN_READS {
            *t.spin_word.borrow_mut() = format!("{} at {site}", word());
            t.wait.set(Wait::Spin);
            self.suspend();
            t.spin.set((key, 0));
        }
    }

    /// Counts an atomic on global word `key` that changed nothing and
    /// returned `value`: a thread that gets the same value
    /// [`POLLS_BEFORE_GIVING_WAY`] times in a row is spinning, and gives
    /// way (`Wait::Poll`) so that the thread it waits for can run: another
    /// thread of its block, which wakes it by changing the word, or, once
    /// every thread of the block waits, another block, to which the block
    /// gives its worker (`BlockRun::run`). Unlike a plain read, an atomic
    /// sees another block's atomic at once, so a block may wait on another
    /// this way, as decoupled look-back does. Whether it gave way: the
    /// caller makes the atomic again. Repeats count as polls, not work, for
    /// the watchdog (`crate::watch`).
    pub(crate) fn note_poll(&self, key: u64, value: u64, word: (&'static str, usize), site: Site) -> bool {
        let t = self.thread();
        let mut p = t.poll.get();
        if p.word.is_none() || p.key != key || p.value != value {
            t.poll.set(Poll { key, value, repeats: 0, word: Some(word) });
            return false;
        }
        super::clock::poll_made();
        p.repeats += 1;
        let give_way = p.repeats >= POLLS_BEFORE_GIVING_WAY;
        if give_way {
            // Still polling, for a report (`Block::stopped`), and counting again.
            p.repeats = 1;
        }
        t.poll.set(p);
        if give_way {
            t.site.set(Some(site));
            t.wait.set(Wait::Poll);
            self.suspend();
        }
        give_way
    }

    pub(crate) fn wake_spinners(&self, key: u64) {
        for (t, th) in self.threads.iter().enumerate() {
            let waits = match th.wait.get() {
                Wait::Spin => th.spin.get().0 == key,
                Wait::Poll => th.poll.get().key == key,
                _ => false,
            };
            if waits {
                self.make_runnable(t as u32);
            }
        }
    }

    pub(crate) fn shared_word_range(&self, index: usize, size: usize, access: Access, site: Site) -> std::ops::Range<usize> {
        self.shared_word_range_within(index, size, access, site, self.shared.bytes)
    }

    /// What the shared memory at `byte` is, for a report: the dynamic part
    /// the kernel sized, or its fixed end, which holds its `shared_array!`s
    /// and, in a cooperative kernel, the grid collectives' memory.
    pub(crate) fn shared_place(&self, byte: usize) -> &'static str {
        let front = self.shared.bytes.saturating_sub(self.info().launch.shared_tail as usize);
        if byte < front { "dynamic shared memory" } else { "static shared memory (a shared_array!, or the grid collectives')" }
    }

    /// Faults an access of element `index` (of `size` bytes) that ends past
    /// the launch's dynamic part: the shared memory less the fixed regions at
    /// its end (`Launch::shared_tail`), which `dynamic_shared()` never addresses.
    pub(crate) fn dynamic_part_bound(&self, index: usize, size: usize, access: Access, site: Site) {
        let front = self.shared.bytes.saturating_sub(self.info().launch.shared_tail as usize);
        self.shared_word_range_within(index, size, access, site, front);
    }

    /// [`shared_word_range`](Self::shared_word_range) against the first `limit` bytes.
    fn shared_word_range_within(&self, index: usize, size: usize, access: Access, site: Site, limit: usize) -> std::ops::Range<usize> {
        let start = index.checked_mul(size);
        match start.and_then(|s| s.checked_add(size)) {
            Some(end) if end <= limit => start.unwrap() / 4..end.div_ceil(4),
            _ => {
                let len = limit / size;
                let threads = self.info().launch.threads as usize;
                let tile = self.smallest_tile.get() as usize;
                let tiles = if tile > 0 { threads.div_ceil(tile) } else { 0 };
                // Shared memory sized one element per `per` threads, as a TILE
                // (at most a warp) sizes it, written one element per tile of a
                // smaller size.
                let per = threads.checked_div(len).unwrap_or(0);
                let mismatch = if tile > 0 && len > 0 && len * tile < threads && threads.is_multiple_of(len) && per <= 32 && per.is_power_of_two() {
                    format!(
                        ": this block was cut into tiles of {tile} (tiled_partition::<{tile}>), {} of them, but the shared memory holds one element per {per} threads, as the kernel's TILE sized it; cut the block with tiled_partition::<TILE>, so that the two agree",
                        threads / tile
                    )
                } else if size > 1 && tiles > 0 && limit == tiles {
                    // A sizing function that returned the count of elements,
                    // one per tile, where the launch takes bytes.
                    format!(
                        ": that is one byte per tile ({tiles} tiles of {tile}), where each tile's element takes {size}; the function gives bytes, not elements, so multiply its count by {size} (the size of the element)"
                    )
                } else {
                    String::new()
                };
                self.fail(Fault::OutOfBounds {
                    thread: self.thread_id(),
                    site,
                    buffer: "dynamic shared memory".to_string(),
                    index,
                    len,
                    access,
                    note: Some(format!(
                        "{size}-byte elements; the launch gave {} bytes, as the kernel's #[kernel(shared_memory = ...)] function sized it{mismatch}",
                        limit
                    )),
                })
            }
        }
    }

    /// The words of a shared-memory access, after checking its bounds and
    /// recording it in the race shadow (a race is reported here). The
    /// shadow is kept per word until the block first makes an access of
    /// fewer than 4 bytes, and per byte from then on: two threads writing
    /// neighbouring bytes of one word do not race on a GPU, whose byte
    /// stores are independent.
    pub(crate) fn shared_access(&self, index: usize, size: usize, access: Access, site: Site) -> std::ops::Range<usize> {
        let words = self.shared_word_range(index, size, access, site);
        if size < 4 {
            self.shared.bytewise();
        }
        let g = self.shared.granule.get();
        let (start, end) = (index * size, index * size + size);
        let race = {
            let mut shadow = self.shared.shadow.borrow_mut();
            (start / g..end.div_ceil(g)).find_map(|k| {
                self.check(&mut shadow[k], access, site, || match g {
                    4 => format!("{} word {k} (bytes {}..{})", self.shared_place(4 * k), 4 * k, 4 * k + 4),
                    _ => format!("{} byte {k}", self.shared_place(k)),
                })
            })
        };
        if let Some(f) = race {
            self.race_found(f);
        }
        words
    }

    /// The `size` bytes of element `index` of the shared memory, as bits.
    pub(crate) fn shared_bits(&self, index: usize, size: usize) -> u64 {
        // SAFETY: only this block's threads touch its shared memory, one at a
        // time; the caller checked the bounds (`shared_word_range`).
        let words = unsafe { &*self.shared.words.get() };
        if size == 4 {
            return words[index] as u64;
        }
        // SAFETY: the words' bytes, as bytes.
        let bytes = unsafe { std::slice::from_raw_parts(words.as_ptr() as *const u8, words.len() * 4) };
        let b = &bytes[index * size..index * size + size];
        match size {
            1 => b[0] as u64,
            2 => u16::from_ne_bytes([b[0], b[1]]) as u64,
            _ => u64::from_ne_bytes(b.try_into().expect("8 bytes")),
        }
    }

    /// Sets element `index` (of `size` bytes) of the shared memory to `bits`.
    pub(crate) fn set_shared_bits(&self, index: usize, size: usize, bits: u64) {
        // SAFETY: as in `shared_bits`.
        let words = unsafe { &mut *self.shared.words.get() };
        if size == 4 {
            words[index] = bits as u32;
            return;
        }
        // SAFETY: the words' bytes, as bytes.
        let bytes = unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr() as *mut u8, words.len() * 4) };
        let b = &mut bytes[index * size..index * size + size];
        match size {
            1 => b[0] = bits as u8,
            2 => b.copy_from_slice(&(bits as u16).to_ne_bytes()),
            _ => b.copy_from_slice(&bits.to_ne_bytes()),
        }
    }

    /// The key a spinning thread waits on for shared word `word`.
    pub(crate) fn shared_key(word: usize) -> u64 {
        u64::MAX - word as u64
    }

    /// The key a spinning thread waits on for `Out` parameter `slot`'s element `index`.
    pub(crate) fn global_key(slot: u32, index: usize) -> u64 {
        ((slot as u64) << 48) | index as u64
    }

    /// Notes an access to this block's own shared memory for its cluster's checks.
    pub(crate) fn note_own(&self, word: usize, access: Access, site: Site) {
        if let Some(seat) = &self.seat {
            let touch = Touch { thread: self.thread_id(), access, site };
            let mut p = seat.phase.borrow_mut();
            match access {
                Access::Read => p.own_reads.entry(word).or_insert(touch),
                Access::Write | Access::Atomic => p.own_writes.entry(word).or_insert(touch),
            };
        }
    }

    /// The seat of a block of a cluster launch, and `rank`'s word range,
    /// after checking the rank, its block's exit and the bounds.
    fn remote(&self, rank: u32, index: usize, size: usize, access: Access, site: Site) -> (&Seat, usize) {
        let seat = self.seat.as_ref().expect("only a cluster launch maps another block's shared memory");
        self.check_rank(rank, site);
        let words = self.shared_word_range(index, size, access, site);
        if seat.view.borrow().exited[rank as usize] {
            self.fail(Fault::ClusterBlockExited { thread: self.thread_id(), site, owner: seat.block_of(rank), rank, access });
        }
        (seat, words.start)
    }

    /// Fails unless `rank` names a block of this block's cluster.
    pub fn check_rank(&self, rank: u32, site: Site) {
        let size = self.seat.as_ref().map_or(1, |s| s.size);
        if rank >= size {
            self.fail(Fault::ClusterRankOutOfRange { thread: self.thread_id(), site, rank, size });
        }
    }

    /// A word of the shared memory of the cluster's block `rank` (distributed
    /// shared memory; `crate::cluster` says what a block sees).
    pub fn cluster_shared_read(&self, rank: u32, index: usize, size: usize, site: Site) -> u64 {
        if self.seat.as_ref().is_some_and(|s| s.rank == rank) {
            return self.shared_read(index, size, site);
        }
        let (seat, word) = self.remote(rank, index, size, Access::Read, site);
        let touch = Touch { thread: self.thread_id(), access: Access::Read, site };
        let mut p = seat.phase.borrow_mut();
        if let Some(&(bits, _)) = p.remote_writes.get(&(rank, word)) {
            return bits as u64;
        }
        p.remote_reads.entry((rank, word)).or_insert(touch);
        seat.view.borrow().words[rank as usize][word] as u64
    }

    /// Writes a word of the cluster's block `rank`'s shared memory.
    pub fn cluster_shared_write(&self, rank: u32, index: usize, size: usize, bits: u64, site: Site) {
        if self.seat.as_ref().is_some_and(|s| s.rank == rank) {
            return self.shared_write(index, size, bits, site);
        }
        let (seat, word) = self.remote(rank, index, size, Access::Write, site);
        let touch = Touch { thread: self.thread_id(), access: Access::Write, site };
        seat.phase.borrow_mut().remote_writes.insert((rank, word), (bits as u32, touch));
    }

    /// Notes a fault, reported as a data race is ([`Block::race_found`]),
    /// unless every byte of element `index` (of `size` bytes) of the shared
    /// memory was written before this `access` reads it.
    pub(crate) fn check_shared_written(&self, index: usize, size: usize, access: Access, site: Site) {
        if !self.shared.all_written(index * size, size) {
            self.race_found(Fault::SharedUninitialized { thread: self.thread_id(), site, index, size, access });
        }
    }

    pub fn shared_read(&self, index: usize, size: usize, site: Site) -> u64 {
        let words = self.shared_access(index, size, Access::Read, site);
        self.check_shared_written(index, size, Access::Read, site);
        self.note_own(words.start, Access::Read, site);
        self.note_read(Self::shared_key(words.start), site, || format!("{} word {}", self.shared_place(4 * words.start), words.start));
        self.shared_bits(index, size)
    }

    pub fn shared_write(&self, index: usize, size: usize, bits: u64, site: Site) {
        let words = self.shared_access(index, size, Access::Write, site);
        self.note_own(words.start, Access::Write, site);
        self.forget_spin();
        self.set_shared_bits(index, size, bits);
        self.shared.mark_written(index * size, size);
        self.wake_spinners(Self::shared_key(words.start));
    }

    pub fn global_read(&self, slot: u32, name: &str, index: usize, published: &dyn Fn() -> u64, site: Site) -> u64 {
        let key = (slot, index);
        let race = {
            let mut g = self.global.borrow_mut();
            self.check(g.shadow.entry(key).or_default(), Access::Read, site, || format!("{name}[{index}]"))
        };
        if let Some(f) = race {
            self.race_found(f);
        }
        self.note_read(Self::global_key(slot, index), site, || format!("{name}[{index}]"));
        let mut g = self.global.borrow_mut();
        match g.writes.get(&key) {
            Some(&(bits, _)) => bits,
            None => {
                g.reads.entry(key).or_insert(site);
                drop(g);
                published()
            }
        }
    }

    pub fn global_write(&self, slot: u32, name: &str, index: usize, bits: u64, site: Site) {
        let key = (slot, index);
        let race = {
            let mut g = self.global.borrow_mut();
            let race = self.check(g.shadow.entry(key).or_default(), Access::Write, site, || format!("{name}[{index}]"));
            g.writes.entry(key).and_modify(|w| w.0 = bits).or_insert((bits, site));
            race
        };
        if let Some(f) = race {
            self.race_found(f);
        }
        self.forget_spin();
        self.wake_spinners(Self::global_key(slot, index));
    }
}
