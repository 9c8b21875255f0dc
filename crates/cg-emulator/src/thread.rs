//! What an emulated GPU thread calls: the emulator's side of cg-kernel's
//! `arch` and `mem`, one function per instruction, collective or memory
//! access. Each finds the running thread through the worker's current
//! block, and either answers at once or suspends the thread's coroutine
//! until the block's scheduler resumes it.
//!
//! Called from anywhere but a kernel the emulator runs, each panics ("a GPU
//! function was called outside an emulated launch"). Inside one, what a
//! call reaches is checked against the launch: an index past a buffer or
//! past the shared memory, a parameter slot the launch does not have, an
//! atomic's `Element` that is not one of the launch's, is a fault of the
//! launch, named, or a panic of the kernel, which the launch reports as a
//! fault; no safe call here reads or writes memory outside the launch's
//! arguments and the blocks' shared memory. [`load_published`], whose
//! address it cannot check, is `unsafe`.
//!
//! What the kernel language alone passes is not all checked, and a call
//! outside it may panic with an internal message or answer wrongly:
//! - an element size other than 1, 2, 4 or 8 (the shared-memory calls) or
//!   other than 4 (`cluster_shared_read` and `cluster_shared_write`, which
//!   read and write whole words);
//! - in a launch without clusters, a cluster barrier (`cluster_arrive`,
//!   `cluster_wait`: `Device::launch` itself panics) or another block's
//!   shared memory (a panic of the kernel);
//! - an atomic's `op` that is not a pure function of the old bits (it may
//!   run twice) or that calls back into this module;
//! - a [`Call`] kept past its kernel's return (its drop panics).
//!
//! cg-kernel's `mem` and `cg` pass none of these.

pub use crate::atomic::Element;
use crate::block::{Block, CURRENT};
use crate::clock;
pub use crate::fault::Access;
use crate::fault::{Fault, Site};
use crate::warp::Kind;
pub use crate::warp::Mode;
use std::panic::Location;

/// The block the calling GPU thread runs in.
fn block() -> &'static Block {
    let b = CURRENT.with(|c| c.get());
    assert!(!b.is_null(), "a GPU function was called outside an emulated launch");
    // SAFETY: the worker sets CURRENT to the block it runs and clears it after;
    // the block lives until then, and GPU code runs only in between.
    unsafe { &*b }
}

/// `%tid`.
pub fn thread_idx() -> [u32; 3] {
    [block().current.get(), 0, 0]
}
/// `%ntid`.
pub fn block_dim() -> [u32; 3] {
    [block().info().launch.threads, 1, 1]
}
/// `%ctaid`.
pub fn block_idx() -> [u32; 3] {
    [block().id, 0, 0]
}
/// `%nctaid`.
pub fn grid_dim() -> [u32; 3] {
    [block().info().launch.grid, 1, 1]
}
/// Faults an access of element `index` (of `size` bytes) through the
/// kernel's `dynamic_shared()` that ends past the launch's dynamic part
/// (its shared memory less `Launch::shared_tail`), named as past the bytes
/// the kernel's sizing function gave.
#[track_caller]
pub fn dynamic_shared_bound(index: usize, size: usize, access: Access) {
    let b = block();
    b.dynamic_part_bound(index, size, access, site());
}

/// `%dynamic_smem_size`: the launch's dynamic shared memory, in bytes.
pub fn dynamic_smem_size() -> u32 {
    block().info().launch.shared_bytes
}
/// `%laneid`.
pub fn lane_id() -> u32 {
    block().current.get() % 32
}
/// Whether the launch was cooperative (the emulator's grid workspace), or
/// the emulator hands every launch one (`Options::ordinary_launches_get_a_workspace`).
pub fn cooperative() -> bool {
    let info = block().info();
    info.launch.cooperative || info.workspace_always
}

/// The cooperative-groups call a thread is in, for reports: set on entry,
/// cleared on return; a call made inside another keeps the outer name.
pub struct Call {
    set: bool,
}

impl Call {
    /// Enters `name` (`"cg::reduce()"`), called from a `#[track_caller]`
    /// chain that starts where the kernel makes the call.
    #[track_caller]
    pub fn enter(name: &'static str) -> Call {
        let t = block().thread();
        let set = t.call.get().is_none();
        if set {
            t.call.set(Some(Site { location: Location::caller(), call: name }));
        }
        Call { set }
    }
}

impl Drop for Call {
    fn drop(&mut self) {
        if self.set {
            block().thread().call.set(None);
        }
    }
}

#[track_caller]
fn site() -> Site {
    block().site(Location::caller())
}

/// `bar.sync 0`.
#[track_caller]
pub fn sync_threads() {
    let s = site();
    block().sync_threads(s);
}

/// `bar.warp.sync mask`.
#[track_caller]
pub fn sync_warp(mask: u32) {
    let s = site();
    block().collective(Kind::Sync, mask, 0, 0, 0, s);
}

/// `shfl.sync` in `mode` of `v` over the lanes of `mask`, with the lane
/// operand `b` and the clamp and segment word `c`.
#[track_caller]
pub fn shuffle(mode: Mode, mask: u32, v: u32, b: u32, c: u32) -> u32 {
    let s = site();
    block().collective(Kind::Shfl(mode), mask, v as u64, b, c, s)
}

/// `vote.sync.ballot`.
#[track_caller]
pub fn ballot(mask: u32, pred: bool) -> u32 {
    let s = site();
    block().collective(Kind::Ballot, mask, pred as u64, 0, 0, s)
}

/// `match.any.sync` of a 32-bit value, or of a 64-bit one where `wide`.
#[track_caller]
pub fn match_any(mask: u32, v: u64, wide: bool) -> u32 {
    let s = site();
    block().collective(Kind::MatchAny { wide }, mask, v, 0, 0, s)
}

/// `match.all.sync` of a 32-bit value, or of a 64-bit one where `wide`:
/// `mask` if every lane of it has `v`, else 0.
#[track_caller]
pub fn match_all(mask: u32, v: u64, wide: bool) -> u32 {
    let s = site();
    block().collective(Kind::MatchAll { wide }, mask, v, 0, 0, s)
}

/// `activemask`.
#[track_caller]
pub fn active_mask() -> u32 {
    let s = site();
    block().active_mask(s)
}

/// `grid.sync()`; `valid` is `is_valid()` of the grid group.
#[track_caller]
pub fn grid_sync(valid: bool) {
    grid_barrier_allowed(valid);
    let b = block();
    b.grid_sync(site());
}

/// What a grid barrier needs before anything else (`grid.sync()`, and the
/// grid collectives at their start, whose first step is not yet their
/// barrier): a kernel declared `#[kernel(cooperative)]`, launched
/// cooperatively (`valid`, `is_valid()` of the grid group). Either missing
/// is a fault of the launch, named at the call.
#[track_caller]
pub fn grid_barrier_allowed(valid: bool) {
    let b = block();
    let s = site();
    let launch = b.info().launch;
    if !launch.grid_sync {
        b.fail(Fault::GridSyncUndeclared { thread: b.thread_id(), site: s, kernel: launch.kernel });
    }
    if !valid {
        b.fail(Fault::GridSyncNotCooperative { thread: b.thread_id(), site: s });
    }
}

/// The grid collectives' word of this thread's block for the next grid
/// barrier (cg-kernel's `GridGroup::reduce`, the scans, `select`): its
/// thread 0 gives it, then every thread of the block calls [`grid_sync`];
/// after it, any thread reads any block's word with [`grid_gathered`]. Two
/// slots by the parity of the grid barriers reached, as on the GPU
/// (`cg_barrier::launch_memory`).
///
/// # Panics
/// If `k` is not below `cg_barrier::launch_memory::SLOT_WORDS` (a panic of
/// the kernel, which the launch reports as a fault).
pub fn grid_publish(k: u32, word: u64) {
    use cg_barrier::launch_memory::SLOT_WORDS;
    assert!(k < SLOT_WORDS, "word {k} of a block's {SLOT_WORDS} for the grid collectives");
    let b = block();
    let slot = (b.thread().grid_syncs.get() % 2) as usize;
    b.info().gathered[slot][(b.id * SLOT_WORDS + k) as usize].store(word, std::sync::atomic::Ordering::Relaxed);
}

/// Block `from`'s word `k`, as its thread 0 gave it ([`grid_publish`])
/// before the grid barrier this thread passed last.
///
/// # Panics
/// If `from` is not a block of the grid, `k` not below `SLOT_WORDS`, or no
/// grid barrier has been passed (a panic of the kernel, which the launch
/// reports as a fault).
pub fn grid_gathered(from: u32, k: u32) -> u64 {
    use cg_barrier::launch_memory::SLOT_WORDS;
    let b = block();
    let reached = b.thread().grid_syncs.get();
    assert!(reached > 0, "a grid collective's words were read before any grid barrier");
    assert!(k < SLOT_WORDS, "word {k} of a block's {SLOT_WORDS} for the grid collectives");
    let words = &b.info().gathered[((reached - 1) % 2) as usize];
    match words.get((from as usize).saturating_mul(SLOT_WORDS as usize).saturating_add(k as usize)) {
        Some(w) => w.load(std::sync::atomic::Ordering::Relaxed),
        None => panic!("the grid collectives' word of block {from}, in a grid of {} blocks", words.len() / SLOT_WORDS as usize),
    }
}

/// The name a grid collective is reported by, with what every block must
/// agree on: `grid.reduce::<f32, Plus>()`, `grid.select_items::<4>()`
/// (`kind` is `"grid.reduce"`; `types` its type arguments, each shortened
/// to its last path segment). One string per distinct name, kept for the
/// process: a kernel has few.
pub fn collective_name(kind: &'static str, types: &[&'static str]) -> &'static str {
    use std::collections::HashMap;
    use std::sync::Mutex;
    /// A name's kind and type arguments, and the name made of them.
    type Names = HashMap<(&'static str, Vec<&'static str>), &'static str>;
    static NAMES: Mutex<Option<Names>> = Mutex::new(None);
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    let key = (kind, types.to_vec());
    if let Some(name) = names.get_or_insert_with(HashMap::new).get(&key) {
        return name;
    }
    let short: Vec<String> = types.iter().map(|t| short_type(t)).collect();
    let name: &'static str = Box::leak(format!("{kind}::<{}>()", short.join(", ")).into_boxed_str());
    names.get_or_insert_with(HashMap::new).insert(key, name);
    name
}

/// A type's name as a collective's name shows it: the library's own types
/// and the standard library's by their last segment (`Plus` from
/// `cg_kernel::cg::ops::Plus`), any other by its whole path
/// (`my_crate::a::Op`), so that two operators of one name in different
/// modules are two names, which blocks that disagree on them are told by;
/// the generic arguments alike (`Wrap<Plus>`).
fn short_type(t: &str) -> String {
    let shown = |word: &str| -> String {
        let ours = ["cg_kernel::", "core::", "alloc::", "std::"].iter().any(|p| word.starts_with(p));
        if ours { word.rsplit("::").next().unwrap_or("").to_string() } else { word.to_string() }
    };
    let mut out = String::new();
    let mut word = String::new();
    for c in t.chars() {
        if c.is_alphanumeric() || c == '_' || c == ':' {
            word.push(c);
        } else {
            out.push_str(&shown(&word));
            word.clear();
            out.push(c);
        }
    }
    out.push_str(&shown(&word));
    out
}

/// A GPU's wait at a barrier across GPUs ran out: another never arrived.
#[track_caller]
pub fn multi_grid_timeout(rank: u32, waited_ns: u64) -> ! {
    let b = block();
    b.fail(Fault::MultiGridTimeout { thread: b.thread_id(), site: site(), rank, seconds: waited_ns as f64 * 1e-9 })
}

/// The resident place of the current thread's block (the emulator's `%smid`).
pub fn place() -> u32 {
    block().place()
}

/// Counts one memory access.
#[inline]
#[track_caller]
pub fn tick() {
    let (checkpoint_due, race_due) = clock::step();
    if checkpoint_due {
        checkpoint(Location::caller());
    }
    if race_due {
        let b = block();
        b.fail(b.race().expect("a race was found"))
    }
}

/// Every `clock::QUANTUM` accesses (or fewer, seeded): tells the watchdog
/// of the steps made, and stops here if it has stopped the launch, naming
/// the access at `at`.
#[cold]
fn checkpoint(at: &'static Location<'static>) {
    let b = block();
    let info = b.info();
    if let Some(pause) = info.throttle {
        std::thread::sleep(pause);
    }
    b.account();
    if info.aborted() {
        b.fail(b.stopped(Some(b.site(at))));
    }
    let next = match info.seed {
        Some(_) => {
            // Give way here: the scheduler picks the next thread at random.
            b.suspend();
            1 + (b.random() % 64) as u32
        }
        None => clock::QUANTUM,
    };
    clock::set_budget(next);
}

/// Notes that the calling thread's block was cut into tiles of `size`
/// (`tiled_partition::<size>`).
pub fn tile_made(size: u32) {
    let b = block();
    let smallest = b.smallest_tile.get();
    if smallest == 0 || size < smallest {
        b.smallest_tile.set(size);
    }
}

/// Reports an access outside a kernel parameter's buffer.
#[track_caller]
pub fn out_of_bounds(buffer: &'static str, index: usize, len: usize, access: Access) -> ! {
    let b = block();
    // A buffer as long as the grid has blocks holds one element per block:
    // the lesson's partials, indexed by a thread's rank or looped past the grid.
    let note = (len > 1 && len == b.info().launch.grid as usize).then(|| {
        format!(
            "{buffer} holds one element per block of this grid of {len}: index it by the block (`block.group_index().x`), not by a thread's rank, and loop over it up to `grid.num_blocks()`"
        )
    });
    b.fail(Fault::OutOfBounds { thread: b.thread_id(), site: site(), buffer: buffer.to_string(), index, len, access, note })
}

/// Faults a kernel's read of `bytes` at `address` (element `index` of
/// `buffer`) where any of them lies in uninitialized memory nothing wrote;
/// `at` is where the kernel reads. Costs one check of an empty list for a
/// launch with no uninitialized argument.
#[inline]
pub fn check_initialized(address: usize, bytes: usize, buffer: &'static str, index: usize, at: &'static Location<'static>) {
    if !super::block::CHECKS_INIT.with(|c| c.get()) {
        return;
    }
    let b = block();
    if let Some((shadow, offset)) = b.info().shadow(address, bytes)
        && !shadow.all_set(offset, bytes)
    {
        b.fail(Fault::Uninitialized { thread: b.thread_id(), site: b.site(at), buffer, index })
    }
}

/// Reports a vector load from a misaligned address.
#[track_caller]
pub fn misaligned(buffer: &'static str, index: usize, alignment: usize) -> ! {
    let b = block();
    b.fail(Fault::Misaligned { thread: b.thread_id(), site: site(), buffer, index, alignment })
}

/// Faults the launch, as an access outside the buffer, unless `index` is
/// below the length of the launch's `Out` argument in `slot`; panics (a
/// fault of the launch too) if there is none. The emulator publishes a
/// block's writes to the argument's memory at the next grid barrier, so an
/// index it took unchecked would be written there, past the buffer.
#[track_caller]
fn check_out(slot: u32, name: &'static str, index: usize, access: Access) {
    let b = block();
    let len = b.info().launch.args.iter().find_map(|a| match *a {
        crate::Arg::Out { len, slot: s, .. } if s == slot => Some(len),
        _ => None,
    });
    let Some(len) = len else { panic!("{name}: this launch has no Out argument in slot {slot}") };
    if index >= len {
        out_of_bounds(name, index, len, access)
    }
}

/// Reads element `index` of the `Out` parameter in `slot`: the block's own
/// write if it made one, else `published()`. An `index` past the argument
/// is a fault of the launch ([`Fault::OutOfBounds`]).
#[track_caller]
pub fn global_read(slot: u32, name: &'static str, index: usize, published: &dyn Fn() -> u64) -> u64 {
    check_out(slot, name, index, Access::Read);
    tick();
    let s = site();
    block().global_read(slot, name, index, published, s)
}

/// Writes element `index` of the `Out` parameter in `slot`; an `index`
/// past the argument is a fault of the launch ([`Fault::OutOfBounds`]).
#[track_caller]
pub fn global_write(slot: u32, name: &'static str, index: usize, bits: u64) {
    check_out(slot, name, index, Access::Write);
    tick();
    let s = site();
    block().global_write(slot, name, index, bits, s)
}

/// Element `address` (of `size` bytes) of an `Out` parameter as the
/// launch's memory holds it, read with the host's atomic load of that size:
/// another block's atomic may be updating it now.
///
/// # Safety
/// `address` holds `size` (1, 2, 4 or 8) bytes of live memory, aligned to
/// `size`, that every thread of this process accesses atomically meanwhile.
pub unsafe fn load_published(address: usize, size: usize) -> u64 {
    use std::sync::atomic::{AtomicU8, AtomicU16, AtomicU32, AtomicU64, Ordering::Relaxed};
    // SAFETY (each arm): the caller's contract.
    unsafe {
        match size {
            1 => AtomicU8::from_ptr(address as *mut u8).load(Relaxed) as u64,
            2 => AtomicU16::from_ptr(address as *mut u16).load(Relaxed) as u64,
            4 => AtomicU32::from_ptr(address as *mut u32).load(Relaxed) as u64,
            _ => AtomicU64::from_ptr(address as *mut u64).load(Relaxed),
        }
    }
}

/// Counts the atomic just made (which returned `old`) as a memory access:
/// after it, not before, so that a checkpoint it reaches counts it as the
/// poll it may be (`Block::note_poll`), not as work.
#[inline]
#[track_caller]
fn ticked(old: u64) -> u64 {
    tick();
    old
}

/// An atomic on element `e` of an `Out` parameter (`call`, `"atomic_add()"`,
/// names it in reports): `op` maps the old bits to the new; returns the old.
/// An `e` that is not a 4- or 8-byte element of one of the launch's `Out`
/// arguments, at its address, panics: a fault of the launch.
#[track_caller]
pub fn global_atomic(e: Element, block_scoped: bool, call: &'static str, op: &dyn Fn(u64) -> u64) -> u64 {
    let old = block().global_atomic(e, block_scoped, Some(op), Site { location: Location::caller(), call });
    ticked(old)
}

/// An atomic load of element `e` (`atomic_load()` and `atomic_load_acquire()`):
/// an atomic that changes nothing, and a poll the spin detector counts.
#[track_caller]
pub fn global_atomic_load(e: Element, block_scoped: bool, call: &'static str) -> u64 {
    let old = block().global_atomic(e, block_scoped, None, Site { location: Location::caller(), call });
    ticked(old)
}

/// An atomic on element `index` (of `size` bytes) of the dynamic shared memory, as [`global_atomic`].
#[track_caller]
pub fn shared_atomic(index: usize, size: usize, call: &'static str, op: &dyn Fn(u64) -> u64) -> u64 {
    let old = block().shared_atomic(index, size, Some(op), Site { location: Location::caller(), call });
    ticked(old)
}

/// An atomic load of shared element `index`, as [`global_atomic_load`].
#[track_caller]
pub fn shared_atomic_load(index: usize, size: usize, call: &'static str) -> u64 {
    let old = block().shared_atomic(index, size, None, Site { location: Location::caller(), call });
    ticked(old)
}

/// Reads element `index` (of `size` bytes) of the dynamic shared memory.
#[track_caller]
pub fn shared_read(index: usize, size: usize) -> u64 {
    tick();
    let s = site();
    block().shared_read(index, size, s)
}

/// Writes element `index` (of `size` bytes) of the dynamic shared memory.
#[track_caller]
pub fn shared_write(index: usize, size: usize, bits: u64) {
    tick();
    let s = site();
    block().shared_write(index, size, bits, s)
}

/// Reports a GPU operation the emulator does not model (fences between
/// blocks, which only the benchmark's last-block sum uses).
#[track_caller]
pub fn not_emulated(what: &'static str) -> ! {
    let b = block();
    let s = site();
    b.fail(Fault::NotEmulated { thread: b.thread_id(), site: s, what })
}

/// The calling block's cluster: its size (1 where the launch has none), its
/// rank in it, and the cluster's index in the grid.
fn cluster_place() -> (u32, u32, u32) {
    let b = block();
    match &b.seat {
        Some(s) => (s.size, s.rank, s.cluster),
        None => (1, 0, b.id),
    }
}
/// `%cluster_ctarank`.
pub fn cluster_ctarank() -> u32 {
    cluster_place().1
}
/// `%cluster_nctarank`.
pub fn cluster_nctarank() -> u32 {
    cluster_place().0
}
/// `%clusterid`.
pub fn cluster_id() -> [u32; 3] {
    [cluster_place().2, 0, 0]
}
/// `%nclusterid`.
pub fn ncluster_id() -> [u32; 3] {
    [block().info().launch.grid / cluster_place().0, 1, 1]
}

/// `barrier.cluster.arrive`.
#[track_caller]
pub fn cluster_arrive() {
    let s = site();
    block().cluster_arrive(s);
}

/// `barrier.cluster.wait`.
#[track_caller]
pub fn cluster_wait() {
    let s = site();
    block().cluster_wait(s);
}

/// `map_shared_rank`'s check: `rank` names a block of the cluster.
#[track_caller]
pub fn check_cluster_rank(rank: u32) {
    let s = site();
    block().check_rank(rank, s);
}

/// Reads element `index` (of `size` bytes) of the cluster's block `rank`'s shared memory.
#[track_caller]
pub fn cluster_shared_read(rank: u32, index: usize, size: usize) -> u64 {
    tick();
    let s = site();
    block().cluster_shared_read(rank, index, size, s)
}

/// Writes element `index` (of `size` bytes) of the cluster's block `rank`'s shared memory.
#[track_caller]
pub fn cluster_shared_write(rank: u32, index: usize, size: usize, bits: u64) {
    tick();
    let s = site();
    block().cluster_shared_write(rank, index, size, bits, s)
}
