//! Stable least-significant-digit radix sort, CUB's `DeviceRadixSort`, the
//! way CUB's "onesweep" does it (Adinets and Merrill 2022): one cooperative
//! launch reads the keys once and counts every pass's digits (the
//! `sort_histogram_*` kernels), then one launch per pass of 8 bits sorts
//! every tile by its digit and chains the tiles by decoupled look-back on
//! each digit's count (the `sort_pass_*` kernels), scattering each key (and
//! its value) straight to its place in the output.
//!
//! **One pass, one tile.** A block takes its tile by ticket
//! ([`take_tile`]), loads its keys warp-striped (lane `l` of warp `w` holds
//! the tile's elements `w * 32 * ITEMS + 32 u + l`, so that each warp's
//! load covers 32 neighbours), turns each into its ordered bits
//! ([`Twiddle`]) and ranks it within the tile, stably: each warp counts its
//! keys' digits in counters of its own, the digit threads (one per digit)
//! turn the counts into each warp's first rank per digit, and each warp
//! then ranks its keys item by item, the lanes holding one digit found by
//! eight ballots (one per bit), the highest of them adding their number to
//! the warp's counter (CUB's `BlockRadixRankMatchEarlyCounts`). The tile's
//! count of each digit is published as soon as it is known, before the
//! ranking; the digit's thread then looks back over the tiles before for
//! its digit's keys before this tile, and the block writes each key to the
//! digit's start in the output (from the pass's histogram), plus the keys of
//! its digit in the tiles before, plus its rank among the tile's keys of its
//! digit. The keys (and values) go through shared memory in their sorted
//! order first, so that neighbouring threads write neighbouring places. The
//! scan of the pass's counts, which CUB makes in a launch of its own, each
//! tile makes with its own (one 64-bit scan carries both).
//!
//! **The look-back's words** are 32 bits, one per digit and tile: a flag in
//! the top two bits ([`PARTIAL`]: the tile's own count; [`INCLUSIVE`]: the
//! count of the digit's keys in this tile and every tile before it), the
//! count below, 0 while the tile has published nothing. A count must fit
//! in 30 bits, so one launch takes at most [`portion_len`] elements; a longer
//! input is sorted a portion at a time within each pass, each portion's last
//! tile handing its counts to the next ([`CARRY_IN`], [`CARRY_OUT`]). A
//! word of 0 is "not yet", so the words must be 0 at a launch's start: the
//! sort keeps two arrays, and each launch clears the one the next launch
//! uses (the histogram launch clears the first pass's).

use crate::lookback::take_tile;
use cg_kernel::cg::{GridGroup, Plus, ThreadBlockTile, block_exclusive_scan, block_scratch_bytes, this_grid, this_thread_block, tiled_partition};
use cg_kernel::kernel;
use cg_kernel::mem::{DynamicShared, In, Out, Scope, Word, dynamic_shared};
use core::ops::{BitAnd, BitOr, BitXor, Not, Shr};

/// Bits a pass sorts by.
pub const RADIX_BITS: u32 = 8;
/// Digits of a pass: one thread of the block each.
pub const RADIX: usize = 1 << RADIX_BITS;

/// Threads per block of the passes: 12 warps, as CUB's onesweep on sm_90.
pub const PASS_THREADS: u32 = 384;
/// Warps per block of the passes.
const PASS_WARPS: usize = PASS_THREADS as usize / 32;
/// Threads per block of the histogram.
pub const HISTOGRAM_THREADS: u32 = 256;

/// Keys each thread of a pass sorts: 20 for keys of up to 4 bytes (CUB's
/// sm_90 tuning for 4-byte keys), 15 for 8-byte ones (CUB's 30 "nominal
/// 4-byte items" scaled by the key's size); with values, 20 and 13, so that
/// a tile's keys and values fit the 64 KiB of shared memory a block of
/// sm_75 may have (CUB takes 23 with 4-byte keys on sm_90).
pub const fn items_per_thread(key_bytes: usize, pairs: bool) -> usize {
    match (key_bytes > 4, pairs) {
        (false, _) => 20,
        (true, false) => 15,
        (true, true) => 13,
    }
}

/// Elements one block of a pass sorts: [`PASS_THREADS`] times
/// [`items_per_thread`].
pub const fn tile_len(key_bytes: usize, pairs: bool) -> usize {
    PASS_THREADS as usize * items_per_thread(key_bytes, pairs)
}

/// The most elements one pass launch takes: the largest multiple of the
/// tile below 2^28, so that every count of a look-back word, at most the
/// launch's elements, fits its 30 bits (CUB's portion).
pub const fn portion_len(key_bytes: usize, pairs: bool) -> usize {
    ((1 << 28) - 1) / tile_len(key_bytes, pairs) * tile_len(key_bytes, pairs)
}

/// Tiles' words a digit's thread reads at once, after the nearest one it
/// waits for, as it looks back.
const LOOK_AHEAD: usize = 7;

/// Look-back word: the low 30 bits are the tile's own count of the digit.
pub const PARTIAL: u32 = 1 << 30;
/// Look-back word: the low 30 bits are the digit's count in this tile and
/// every tile before it in the launch.
pub const INCLUSIVE: u32 = 1 << 31;
/// The count's bits of a look-back word.
const COUNT: u32 = PARTIAL - 1;

/// Control word: the keys are signed integers (their sign bit flipped).
pub const SIGNED: u32 = 1 << 16;
/// Control word: the keys are IEEE floats (every bit flipped where the sign
/// is set, else the sign bit: CUB's order, NaNs where their bits put them).
pub const FLOAT: u32 = 1 << 17;
/// Control word: sort descending (every ordered bit flipped, which keeps
/// equal keys in their order).
pub const DESCENDING: u32 = 1 << 18;
/// Control word of a pass: add `carry_in`'s counts, those of the input's
/// portions before this launch's, to each digit's start.
pub const CARRY_IN: u32 = 1 << 19;
/// Control word of a pass: the launch's last tile writes each digit's count
/// in this launch and the portions before it to `carry_out`, for the next
/// portion.
pub const CARRY_OUT: u32 = 1 << 20;

/// A pass's control word: the digit at bit `shift`, `width` bits wide (1 to
/// 8), and `flags` ([`SIGNED`], [`FLOAT`], [`DESCENDING`], [`CARRY_IN`],
/// [`CARRY_OUT`]).
pub const fn pass_control(shift: u32, width: u32, flags: u32) -> u32 {
    shift | width << 8 | flags
}

/// The histogram's control word: the keys' bits `begin..end` (at most 64),
/// and `flags` ([`SIGNED`], [`FLOAT`], [`DESCENDING`]).
pub const fn histogram_control(begin: u32, end: u32, flags: u32) -> u32 {
    begin | end << 8 | flags
}

/// The bits of a key as the sort handles them: `u8`, `u16`, `u32` or
/// `u64` (a signed or float key is sorted as its bits, [`Twiddle`]d).
pub trait SortKey: Word + Eq + BitXor<Output = Self> + BitAnd<Output = Self> + BitOr<Output = Self> + Not<Output = Self> + Shr<u32, Output = Self> {
    /// No bit set.
    const ZERO: Self;
    /// The top bit alone.
    const SIGN: Self;
    /// Every bit but the top one: `-0.0`'s ordered bits.
    const BELOW_SIGN: Self;
    /// Every bit set.
    const ONES: Self;
    /// Every bit set where the top bit is, else none.
    fn spread_sign(self) -> Self;
    /// The low 32 bits.
    fn low32(self) -> u32;
}

macro_rules! sort_keys {
    ($($t:ty, $signed:ty;)*) => {$(
        impl SortKey for $t {
            const ZERO: $t = 0;
            const SIGN: $t = 1 << (<$t>::BITS - 1);
            const BELOW_SIGN: $t = <$t>::MAX >> 1;
            const ONES: $t = <$t>::MAX;
            #[inline(always)]
            fn spread_sign(self) -> $t {
                ((self as $signed) >> (<$t>::BITS - 1)) as $t
            }
            #[inline(always)]
            fn low32(self) -> u32 {
                self as u32
            }
        }
    )*};
}
sort_keys! {
    u8, i8;
    u16, i16;
    u32, i32;
    u64, i64;
}

/// The order-preserving transform between a key's bits and the bits the
/// sort orders by (CUB's `RadixSortTwiddle`): signed integers get their
/// sign bit flipped; floats every bit where the sign is set and the sign
/// bit where it is not; for a descending sort every bit is flipped after
/// that. Each is its own inverse's mirror ([`original`](Self::original)).
#[derive(Clone, Copy)]
pub struct Twiddle<K> {
    sign: K,
    float: K,
    descending: K,
}

impl<K: SortKey> Twiddle<K> {
    /// The transform a control word's [`SIGNED`], [`FLOAT`] and [`DESCENDING`] ask for.
    #[inline(always)]
    pub fn new(control: u32) -> Twiddle<K> {
        let pick = |flag: u32, bits: K| if control & flag != 0 { bits } else { K::ZERO };
        Twiddle { sign: pick(SIGNED | FLOAT, K::SIGN), float: pick(FLOAT, K::ONES), descending: pick(DESCENDING, K::ONES) }
    }

    /// The bits `key` is sorted by.
    #[inline(always)]
    pub fn ordered(self, key: K) -> K {
        key ^ ((key.spread_sign() & self.float) | self.sign) ^ self.descending
    }

    /// The key whose [`ordered`](Self::ordered) bits are `bits`.
    #[inline(always)]
    pub fn original(self, bits: K) -> K {
        let up = bits ^ self.descending;
        up ^ (((!up).spread_sign() & self.float) | self.sign)
    }

    /// The digit of ordered bits `bits` at `shift`, `mask` wide. A float's
    /// `-0.0` counts as `+0.0` (their ordered bits are neighbours, and CUB's
    /// digits take the one for the other), so the two are equal keys that
    /// keep their order.
    #[inline(always)]
    pub fn digit(self, bits: K, shift: u32, mask: u32) -> u32 {
        let bits = if self.float == K::ONES && bits == K::BELOW_SIGN { K::SIGN } else { bits };
        (bits >> shift).low32() & mask
    }
}

/// `$body` for each `$j` below `$n` (a constant, at most 32), written out:
/// a loop the compiler does not unroll indexes the per-thread arrays at run
/// time, which puts them in local memory.
macro_rules! unroll32 {
    ($n:expr, $j:ident => $body:block) => {
        unroll32!(@ $n, $j $body; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31)
    };
    (@ $n:expr, $j:ident $body:block; $($k:literal)*) => {
        $( if $k < $n { let $j: usize = $k; $body } )*
    };
}

/// Dynamic shared memory of a pass: the look-back's words, the block
/// scan's scratch (one `u64` per warp), each digit's place in the output
/// (`u32`), then a region that holds each warp's digit counters while the
/// keys are ranked and the tile's values in their sorted order after, then
/// (with values; else in the same region) the tile's keys in their sorted
/// order.
pub const fn pass_shared_bytes<K, const ITEMS: usize, const PAIRS: bool>(threads_per_block: u32) -> u32 {
    let counters = threads_per_block.div_ceil(32) as usize * RADIX * 4;
    let keys = threads_per_block as usize * ITEMS * size_of::<K>();
    let values = if PAIRS { threads_per_block as usize * ITEMS * 4 } else { 0 };
    let first = if counters > values { counters } else { values };
    let regions = if PAIRS {
        first.next_multiple_of(8) + keys
    } else if first > keys {
        first
    } else {
        keys
    };
    (8 + block_scratch_bytes::<u64>(threads_per_block, 32) as usize + RADIX * 4 + regions) as u32
}

/// A pass's shared memory, laid out as [`pass_shared_bytes`] sizes it.
struct PassShared<K> {
    /// The look-back's words: element 0 carries the tile's ticket.
    words: DynamicShared<u32>,
    scratch: DynamicShared<u64>,
    /// Where each digit's keys of this tile go: the output index of the
    /// tile's sorted element `i` of digit `d` is `offsets[d] + i` (wrapping).
    offsets: DynamicShared<u32>,
    /// Warp `w`'s counter of digit `d` at `w * RADIX + d`, while ranking.
    counters: DynamicShared<u32>,
    /// The tile's values in their sorted order, after ranking.
    values: DynamicShared<u32>,
    /// The tile's keys in their sorted order, after ranking.
    sorted: DynamicShared<K>,
}

impl<K: SortKey> PassShared<K> {
    /// The layout for `ITEMS` keys a thread, with values or without.
    #[inline(always)]
    fn new<const ITEMS: usize>(pairs: bool) -> PassShared<K> {
        let words = dynamic_shared::<u32>();
        let scratch = words.after::<u64>(2);
        let offsets = scratch.after::<u32>(PASS_WARPS);
        let counters = offsets.after::<u32>(RADIX);
        let first = if pairs { (PASS_WARPS * RADIX).max(PASS_THREADS as usize * ITEMS) } else { 0 };
        PassShared { words, scratch, offsets, counters, values: counters, sorted: counters.after::<K>(first) }
    }
}

/// The lanes of `warp` whose `digit` is this lane's: eight ballots, one per
/// bit (CUB's `MatchAny`, which it finds faster than `match.any.sync` for a
/// few bits).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
fn peers(warp: &ThreadBlockTile<32>, digit: u32) -> u32 {
    let mut peers = u32::MAX;
    for b in 0..RADIX_BITS {
        let set = digit & 1 << b != 0;
        let voted = warp.ballot(set);
        peers &= if set { voted } else { !voted };
    }
    peers
}

/// The count of one digit's keys in tiles `0..k` (`k > 0`), from their
/// look-back words, `load(j)` reading tile `j`'s: back from tile `k - 1`,
/// each tile's own count added until a tile's inclusive count (tile 0's
/// always is). The nearest tile not yet read is waited for, polling its
/// word alone until it is published; the [`LOOK_AHEAD`] tiles before it are
/// then read at once, and taken in order while published, up to the first
/// inclusive count: one round trip to the L2 for several tiles, where CUB's
/// walk takes one for each.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub(crate) fn walk_back(k: usize, mut load: impl FnMut(usize) -> u32) -> u32 {
    let mut before = 0u32;
    // The tiles from j - 1 down are still to be read.
    let mut j = k;
    'walk: loop {
        let word = loop {
            let word = load(j - 1);
            if word != 0 {
                break word;
            }
        };
        j -= 1;
        before += word & COUNT;
        if word & INCLUSIVE != 0 {
            break;
        }
        let mut ahead = [0u32; LOOK_AHEAD];
        unroll32!(LOOK_AHEAD, q => {
            if q < j {
                ahead[q] = load(j - 1 - q);
            }
        });
        unroll32!(LOOK_AHEAD, q => {
            if j == 0 || ahead[q] == 0 {
                continue 'walk;
            }
            j -= 1;
            before += ahead[q] & COUNT;
            if ahead[q] & INCLUSIVE != 0 {
                break 'walk;
            }
        });
    }
    before
}

/// What a pass moves besides the keys: each key's value, or nothing.
#[derive(Clone, Copy)]
struct Values {
    values_in: In<u32>,
    values_out: Out<u32>,
}

/// The body of every pass kernel: one tile, taken by ticket, ranked,
/// looked back over and scattered to the output.
///
/// # Safety
/// As each pass kernel's.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
#[allow(clippy::too_many_arguments)] // a kernel's parameters, passed on
unsafe fn sort_tile<K: SortKey, const ITEMS: usize>(
    keys_in: In<K>,
    keys_out: Out<K>,
    values: Option<Values>,
    hist: In<u32>,
    carry_in: In<u32>,
    carry_out: Out<u32>,
    status: Out<u32>,
    clear: Out<u32>,
    ticket: Out<u32>,
    n: usize,
    clear_len: usize,
    control: u32,
) {
    let block = this_thread_block();
    let warp = tiled_partition::<32>(&block);
    let t = block.thread_rank() as usize;
    let threads = PASS_THREADS as usize;
    let (w, lane) = (t / 32, warp.thread_rank());
    let s = PassShared::<K>::new::<ITEMS>(values.is_some());
    let twiddle = Twiddle::<K>::new(control);
    let shift = control & 0x7f;
    let mask = (1u32 << (control >> 8 & 0xf)) - 1;
    let digit = |bits: K| twiddle.digit(bits, shift, mask);
    let tile = threads * ITEMS;
    let tiles = n.div_ceil(tile);
    let is_digit = t < RADIX;

    // This warp's counters, zeroed; take_tile's barrier orders it before
    // any warp counts.
    let mut d = lane as usize;
    while d < RADIX {
        // SAFETY: warp w's counters, inside pass_shared_bytes; this lane's alone.
        unsafe { s.counters.write(w * RADIX + d, 0) };
        d += 32;
    }
    // SAFETY: every thread calls it once, outside any branch; the kernel's
    // contract gives the ticket; words[0] is used by nothing else.
    let k = unsafe { take_tile(&block, ticket, tiles, s.words) };
    let start = k * tile;
    let len = tile.min(n - start);
    let full = len == tile;

    // The next launch's look-back words, cleared: this block's share.
    if is_digit {
        let mut i = k * RADIX + t;
        while i < clear_len {
            // SAFETY: below clear_len, which `clear` holds; no thread of this
            // launch reads them, and each is this thread's alone.
            unsafe { clear.write(i, 0) };
            i += tiles * RADIX;
        }
    }

    // The tile's keys, warp-striped, as ordered bits; past n, all ones,
    // whose digit is the last, so that they rank after every key. In the
    // last tile, a warp's step whose every lane is past n (`active`, the
    // same in every lane of the warp) is left out of the counts and ranks.
    let first = start + w * 32 * ITEMS + lane as usize;
    let warp_first = first - lane as usize;
    let active = |u: usize| full || warp_first + 32 * u < n;
    let mut keys = [K::ONES; ITEMS];
    unroll32!(ITEMS, u => {
        let i = first + 32 * u;
        if full || i < n {
            // SAFETY: i < n, which keys_in holds.
            keys[u] = twiddle.ordered(unsafe { keys_in.read(i) });
        }
    });

    // Each warp counts its keys' digits.
    unroll32!(ITEMS, u => {
        if full || first + 32 * u < n {
            // SAFETY: warp w's counter of a digit below RADIX; touched only
            // atomically until the barrier.
            unsafe { s.counters.atomic_add(w * RADIX + digit(keys[u]) as usize, 1) };
        }
    });
    block.sync();

    // Each digit's thread: the tile's count of its digit, the count of the
    // digit in the warps before each warp, and the count published at once,
    // before the keys are ranked.
    let mut count = 0u32;
    let mut before_warp = [0u32; PASS_WARPS];
    if is_digit {
        for (v, before) in before_warp.iter_mut().enumerate() {
            *before = count;
            // SAFETY: column t of the counters, this thread's alone after the barrier.
            count += unsafe { s.counters.read(v * RADIX + t) };
        }
        let kind = if k == 0 { INCLUSIVE } else { PARTIAL };
        // SAFETY: tile k's word of digit t, inside `status` (the contract),
        // touched only atomically in this launch.
        unsafe { status.atomic_store(k * RADIX + t, kind | count, Scope::Device) };
    }

    // Where each digit starts: in the pass's output (the histogram's counts
    // of the digits below it) and in the tile, both in one scan.
    // SAFETY: hist holds RADIX counts (the contract).
    let below = if is_digit { unsafe { hist.read(t) } } else { 0 };
    let packed = (below as u64) << 32 | count as u64;
    // SAFETY: every thread calls it, outside any branch; the scratch is the
    // block scan's alone.
    let (before_me, _) = unsafe { block_exclusive_scan(&block, &warp, packed, Plus, s.scratch) };
    let in_tile = before_me as u32;
    let mut in_output = (before_me >> 32) as u32;
    if is_digit {
        if control & CARRY_IN != 0 {
            // SAFETY: carry_in holds RADIX counts where CARRY_IN is set.
            in_output = in_output.wrapping_add(unsafe { carry_in.read(t) });
        }
        for (v, before) in before_warp.iter().enumerate() {
            // SAFETY: column t, this thread's alone.
            unsafe { s.counters.write(v * RADIX + t, in_tile + before) };
        }
    }
    block.sync();

    // Each key's rank in the tile: its digit's start, its warp's keys of
    // the digit before it, then the lanes before it in this step. The fill
    // of the one step that is part keys, part fill, ranks after the tile's
    // every key (its digit is the last, and no later warp has a key).
    let mut ranks = [0u32; ITEMS];
    let lanes_to_me = u32::MAX >> (31 - lane);
    unroll32!(ITEMS, u => {
        if active(u) {
            let d = digit(keys[u]);
            let same = peers(&warp, d);
            let leader = 31 - same.leading_zeros();
            let up_to_me = (same & lanes_to_me).count_ones();
            let mut base = 0;
            if lane == leader {
                // SAFETY: warp w's counter of digit d; atomics alone until the barrier.
                base = unsafe { s.counters.atomic_add(w * RADIX + d as usize, up_to_me) };
            }
            ranks[u] = warp.shfl(base, leader) + up_to_me - 1;
        }
    });
    // The values' loads, in flight during the barrier.
    let mut v = [0u32; ITEMS];
    if let Some(Values { values_in, .. }) = values {
        unroll32!(ITEMS, u => {
            let i = first + 32 * u;
            if full || i < n {
                // SAFETY: i < n, which values_in holds.
                v[u] = unsafe { values_in.read(i) };
            }
        });
    }
    block.sync();

    // The keys, and the values, in their sorted order in shared memory.
    unroll32!(ITEMS, u => {
        if full || first + 32 * u < n {
            // SAFETY: the keys' ranks are a permutation of 0..len, inside
            // pass_shared_bytes; the counters are done with (the barrier).
            unsafe { s.sorted.write(ranks[u] as usize, keys[u]) };
            if values.is_some() {
                // SAFETY: as above, in the values' region.
                unsafe { s.values.write(ranks[u] as usize, v[u]) };
            }
        }
    });

    // Each digit's thread: its keys in the tiles before this one, by
    // look-back, and this tile's inclusive count published.
    if is_digit {
        let mut before = 0u32;
        if k > 0 {
            // SAFETY: tile j < k's word of digit t, touched only atomically.
            before = walk_back(k, |j| unsafe { status.atomic_load(j * RADIX + t, Scope::Device) });
            // SAFETY: as the early store above.
            unsafe { status.atomic_store(k * RADIX + t, INCLUSIVE | (before + count), Scope::Device) };
        }
        // SAFETY: offsets[t], this thread's alone until the barrier.
        unsafe { s.offsets.write(t, in_output.wrapping_add(before).wrapping_sub(in_tile)) };
        if control & CARRY_OUT != 0 && k + 1 == tiles {
            // SAFETY: carry_out holds RADIX counts where CARRY_OUT is set, and
            // only the launch's last tile writes it.
            let carried = if control & CARRY_IN != 0 { unsafe { carry_in.read(t) } } else { 0 };
            unsafe { carry_out.write(t, carried + before + count) };
        }
    }
    block.sync();

    // The keys (and values) written in their sorted order, neighbouring
    // threads to neighbouring places within each digit.
    unroll32!(ITEMS, u => {
        let i = t + u * threads;
        if full || i < len {
            // SAFETY: i < len, a sorted place written before the barrier;
            // offsets written before it too; the output index is the key's
            // place in the pass's output, below the pass's keys, and this
            // thread's alone.
            unsafe {
                let bits = s.sorted.read(i);
                let to = s.offsets.read(digit(bits) as usize).wrapping_add(i as u32) as usize;
                keys_out.write(to, twiddle.original(bits));
                if let Some(Values { values_out, .. }) = values {
                    values_out.write(to, s.values.read(i));
                }
            }
        }
    });
}

/// Vectors each thread of the histogram loads before counting them.
const HISTOGRAM_UNROLL: usize = 4;

/// Dynamic shared memory of the histogram: one counter per digit of each
/// of up to 8 passes.
pub const fn histogram_shared_bytes(_threads_per_block: u32) -> u32 {
    8 * RADIX as u32 * 4
}

/// The body of every histogram kernel; `V` keys make one 16-byte vector.
///
/// # Safety
/// As each histogram kernel's.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
unsafe fn count_digits<K: SortKey, const V: usize>(grid: &GridGroup, keys: In<K>, hist: Out<u32>, clear: Out<u32>, clear_len: usize, n: usize, control: u32) {
    let block = this_thread_block();
    let t = block.thread_rank() as usize;
    let threads = block.num_threads() as usize;
    let (rank, stride) = (grid.thread_rank(), grid.num_threads());
    let twiddle = Twiddle::<K>::new(control);
    let (begin, end) = (control & 0x7f, control >> 8 & 0x7f);
    let passes = (end - begin).div_ceil(RADIX_BITS) as usize;
    let counts = dynamic_shared::<u32>();

    // SAFETY (the writes): each element below its bound written by one
    // thread; the counters touched only atomically after the barrier, the
    // global ones after the grid's.
    let mut i = t;
    while i < passes * RADIX {
        unsafe { counts.write(i, 0) };
        i += threads;
    }
    let mut i = rank;
    while i < passes * RADIX {
        unsafe { hist.write(i, 0) };
        i += stride;
    }
    let mut i = rank;
    while i < clear_len {
        unsafe { clear.write(i, 0) };
        i += stride;
    }
    block.sync();

    let count = |key: K| {
        let bits = twiddle.ordered(key);
        for p in 0..8 {
            if p < passes {
                let shift = begin + RADIX_BITS * p as u32;
                let width = (end - shift).min(RADIX_BITS);
                let d = twiddle.digit(bits, shift, (1 << width) - 1);
                // SAFETY: a counter below passes * RADIX, touched only atomically.
                unsafe { counts.atomic_add(p * RADIX + d as usize, 1) };
            }
        }
    };
    let vectors = n / V;
    let mut v = rank;
    // HISTOGRAM_UNROLL vectors loaded before any is counted, so that more
    // bytes are in flight per thread than one 16-byte load.
    while v + (HISTOGRAM_UNROLL - 1) * stride < vectors {
        let mut loaded = [[K::ZERO; V]; HISTOGRAM_UNROLL];
        unroll32!(HISTOGRAM_UNROLL, u => {
            // SAFETY: vector v + u * stride < n / V, 16 bytes from a
            // 16-byte-aligned start.
            loaded[u] = unsafe { keys.read_vector::<V>((v + u * stride) * V) };
        });
        unroll32!(HISTOGRAM_UNROLL, u => {
            unroll32!(V, j => {
                count(loaded[u][j]);
            });
        });
        v += HISTOGRAM_UNROLL * stride;
    }
    while v < vectors {
        // SAFETY: vector v < n / V, 16 bytes from a 16-byte-aligned start.
        let keys: [K; V] = unsafe { keys.read_vector::<V>(v * V) };
        unroll32!(V, j => {
            count(keys[j]);
        });
        v += stride;
    }
    if rank < n - vectors * V {
        // SAFETY: one of the last n % V keys.
        count(unsafe { keys.read(vectors * V + rank) });
    }
    grid.sync();
    let mut i = t;
    while i < passes * RADIX {
        // SAFETY: below passes * RADIX; the global counts were zeroed before
        // the grid's barrier, and are touched only atomically after it.
        unsafe {
            let c = counts.atomic_load(i, Scope::Block);
            if c > 0 {
                hist.atomic_add(i, c);
            }
        }
        i += threads;
    }
}

/// One histogram kernel and one pass kernel for keys, and one for pairs,
/// per key width.
macro_rules! sort_kernels {
    ($($histogram:ident, $keys:ident, $pairs:ident: $t:ty, $v:literal;)*) => {$(
        #[doc = concat!("`hist[p * 256 + d]` = how many of `keys` (`", stringify!($t), "` bits) have digit `d` in pass `p` (bits `begin + 8p..` of their ordered bits, [`Twiddle`]), for each pass over bits `begin..end` of [`histogram_control`]'s `control`; and `clear[..clear_len]` zeroed. One cooperative launch, one `grid.sync()`.")]
        ///
        /// # Safety
        /// `keys` holds `n` elements from a 16-byte-aligned start; `hist`
        /// holds 256 counts per pass; `clear` holds `clear_len` words; no
        /// other launch uses `hist` or `clear` meanwhile; `begin < end`,
        /// and `end` is at most the key's bits; launched cooperatively with
        /// [`histogram_shared_bytes`]; `n` is below 2^32.
        #[kernel(cooperative, shared_memory = histogram_shared_bytes)]
        pub unsafe fn $histogram(keys: In<$t>, hist: Out<u32>, clear: Out<u32>, clear_len: usize, n: usize, control: u32) {
            // SAFETY: the kernel's contract.
            unsafe { count_digits::<$t, $v>(&this_grid(), keys, hist, clear, clear_len, n, control) }
        }

        #[doc = concat!("One pass of the sort of `keys_in` (`", stringify!($t), "` bits) into `keys_out`, by the digit [`pass_control`]'s `control` names: a block per tile, tiles chained by decoupled look-back on each digit's count.")]
        ///
        /// # Safety
        /// `keys_in` holds `n` elements (at most [`portion_len`]), `n > 0`;
        /// `keys_out` holds every key of the pass, and the keys of this
        /// launch go to its places that `hist` (the pass's 256 counts over
        /// the whole input, whose keys of each digit are this launch's and
        /// those `carry_in` counts before them) gives them, no other
        /// launch's; `carry_in` (where [`CARRY_IN`] is set) and
        /// `carry_out` (where [`CARRY_OUT`] is) hold 256 counts, the latter
        /// used by no other launch meanwhile; the grid has one block of
        /// [`PASS_THREADS`] per tile of [`tile_len`] (this kernel's) and
        /// [`pass_shared_bytes`] of shared memory; `status` holds 256 words
        /// per tile, all 0, and `clear` `clear_len` words, neither used by
        /// any other launch meanwhile; `ticket[0]` is 0, and no other launch
        /// uses it meanwhile.
        #[kernel(launch_bounds(384, 2), shared_memory = pass_shared_bytes::<$t, { items_per_thread(size_of::<$t>(), false) }, false>)]
        pub unsafe fn $keys(keys_in: In<$t>, keys_out: Out<$t>, hist: In<u32>, carry_in: In<u32>, carry_out: Out<u32>, status: Out<u32>, clear: Out<u32>, ticket: Out<u32>, n: usize, clear_len: usize, control: u32) {
            // SAFETY: the kernel's contract.
            unsafe {
                sort_tile::<$t, { items_per_thread(size_of::<$t>(), false) }>(keys_in, keys_out, None, hist, carry_in, carry_out, status, clear, ticket, n, clear_len, control)
            }
        }

        #[doc = concat!("As [`", stringify!($keys), "`], each key (`", stringify!($t), "` bits) moving its value (4 bytes) from `values_in` to `values_out` with it.")]
        ///
        /// # Safety
        #[doc = concat!("As [`", stringify!($keys), "`]'s, with the tiles of this kernel; `values_in` holds `n` values and `values_out` as many as `keys_out` keys.")]
        #[kernel(launch_bounds(384, 2), shared_memory = pass_shared_bytes::<$t, { items_per_thread(size_of::<$t>(), true) }, true>)]
        pub unsafe fn $pairs(keys_in: In<$t>, keys_out: Out<$t>, values_in: In<u32>, values_out: Out<u32>, hist: In<u32>, carry_in: In<u32>, carry_out: Out<u32>, status: Out<u32>, clear: Out<u32>, ticket: Out<u32>, n: usize, clear_len: usize, control: u32) {
            // SAFETY: the kernel's contract.
            unsafe {
                sort_tile::<$t, { items_per_thread(size_of::<$t>(), true) }>(keys_in, keys_out, Some(Values { values_in, values_out }), hist, carry_in, carry_out, status, clear, ticket, n, clear_len, control)
            }
        }
    )*};
}

// The GPU entries only where this crate is built for its own PTX (see
// `crate::reduce`'s kernels).
#[cfg(any(not(target_arch = "nvptx64"), feature = "gpu-entries"))]
sort_kernels! {
    sort_histogram_u8, sort_pass_keys_u8, sort_pass_pairs_u8: u8, 16;
    sort_histogram_u16, sort_pass_keys_u16, sort_pass_pairs_u16: u16, 8;
    sort_histogram_u32, sort_pass_keys_u32, sort_pass_pairs_u32: u32, 4;
    sort_histogram_u64, sort_pass_keys_u64, sort_pass_pairs_u64: u64, 2;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Look-back words of tiles 0.., as `walk_back` reads them: each of
    /// `counts` published `published_after` reads after the walk's first
    /// read of it, inclusive where `inclusive`; the reads, in order.
    struct Words {
        words: Vec<(u32, bool, usize)>,
        reads: Vec<usize>,
    }

    impl Words {
        fn load(&mut self, j: usize) -> u32 {
            self.reads.push(j);
            let seen = self.reads.iter().filter(|&&r| r == j).count();
            let (count, inclusive, after) = self.words[j];
            if seen <= after { 0 } else { count | if inclusive { INCLUSIVE } else { PARTIAL } }
        }
    }

    fn walk(words: Vec<(u32, bool, usize)>) -> (u32, Vec<usize>) {
        let k = words.len();
        let mut w = Words { words, reads: Vec::new() };
        let before = walk_back(k, |j| w.load(j));
        (before, w.reads)
    }

    #[test]
    fn the_walk_adds_each_tiles_count_back_to_the_nearest_inclusive_one() {
        // Tile 0 inclusive, the rest partial, all published: one wait, then
        // eight tiles a round.
        let (before, reads) = walk((0..12).map(|j| (j as u32 + 1, j == 0, 0)).collect());
        assert_eq!(before, (1..=12).sum::<u32>());
        assert_eq!(reads, [11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
        // An inclusive count in the look-ahead: nothing before it is added.
        let mut words: Vec<(u32, bool, usize)> = (0..12).map(|j| (100, j == 0, 0)).collect();
        words[7] = (1000, true, 0);
        let (before, reads) = walk(words);
        assert_eq!(before, 4 * 100 + 1000, "tiles 11, 10, 9, 8 and 7's inclusive count");
        assert!(reads.iter().all(|&j| j >= 3), "read past the look-ahead: {reads:?}");
    }

    #[test]
    fn the_walk_waits_on_the_nearest_unpublished_tile_alone() {
        // Tile 9 unpublished for 3 reads, tile 4 for 5: the walk takes what
        // the look-ahead found published, then polls the first gap alone.
        let mut words: Vec<(u32, bool, usize)> = (0..12).map(|j| (1 << j, j == 0, 0)).collect();
        words[9].2 = 3;
        words[4].2 = 5;
        let (before, reads) = walk(words);
        assert_eq!(before, (1 << 12) - 1, "every tile's count, once");
        // Tile 11 waited for; 10 taken from the look-ahead, 9 not yet
        // published: 9 polled alone; then 8 to 5 taken, 4 polled alone.
        let want = [11, 10, 9, 8, 7, 6, 5, 4, 9, 9, 9, 8, 7, 6, 5, 4, 3, 2, 4, 4, 4, 4, 3, 2, 1, 0];
        assert_eq!(reads, want);
        // The single tile before tile 1.
        let (before, _) = walk(vec![(5, true, 2)]);
        assert_eq!(before, 5);
    }
}
