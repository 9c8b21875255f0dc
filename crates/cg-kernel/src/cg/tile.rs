use super::block::ThreadBlock;
use super::lanes::{shfl_c, tile_mask};
use super::ops::{ReduceOp, Redux};
use crate::arch;

/// A value that can cross lanes in a shuffle: 32-bit values in one `shfl.sync`,
/// 64-bit values in two (the C++ `shfl` templates accept the same types).
/// Sealed: a shuffle moves 4 or 8 bytes, which another type's size could not match.
///
/// ```compile_fail,E0277
/// #[derive(Clone, Copy)]
/// struct Pair(u16, u16);
/// impl cg_kernel::cg::ShuffleValue for Pair {
///     fn shuffle(self, _: impl Fn(u32) -> u32) -> Self {
///         self
///     }
/// }
/// ```
pub trait ShuffleValue: Copy + crate::mem::sealed::Sealed {
    /// Moves `self` through `shuffle`, one 32-bit word at a time.
    fn shuffle(self, shuffle: impl Fn(u32) -> u32) -> Self;

    /// `redux.sync` of `kind` over the lanes of `mask` (sm_80+), where the
    /// hardware has it for this type (32-bit integers); `None` otherwise.
    ///
    /// # Safety
    /// As `redux.sync`: the calling lane is in `mask` and every lane of `mask` calls it.
    #[doc(hidden)]
    #[inline(always)]
    unsafe fn redux(self, _kind: Redux, _mask: u32) -> Option<Self> {
        None
    }
}

/// The tile-wide result of `Op` from the hardware's `redux.sync`, where the
/// target has it for `T` and the operator names one ([`ReduceOp::redux`]);
/// `None` means "use shuffles".
///
/// # Safety
/// As `redux.sync`: the calling lane is in `mask` and every lane of `mask` calls it.
#[inline(always)]
pub(super) unsafe fn hardware<T: ShuffleValue, Op: const ReduceOp<T>>(mask: u32, v: T) -> Option<T> {
    match Op::redux() {
        // SAFETY: the caller's contract.
        Some(kind) if cfg!(target_feature = "sm_80") => unsafe { v.redux(kind, mask) },
        _ => None,
    }
}

/// `redux.sync` for a 32-bit integer type, by its kind.
macro_rules! redux_32 {
    ($t:ty, $add:ident, $min:ident, $max:ident, $and:ident, $or:ident, $xor:ident) => {
        #[cfg(target_feature = "sm_80")]
        #[inline(always)]
        unsafe fn redux(self, kind: Redux, mask: u32) -> Option<Self> {
            // SAFETY: the caller's contract.
            Some(unsafe {
                match kind {
                    Redux::Add => arch::$add(mask, self),
                    Redux::Min => arch::$min(mask, self),
                    Redux::Max => arch::$max(mask, self),
                    Redux::And => arch::$and(mask, self),
                    Redux::Or => arch::$or(mask, self),
                    Redux::Xor => arch::$xor(mask, self),
                }
            })
        }
    };
}

macro_rules! shuffle_32 {
    ($($t:ty),*) => {$(
        impl ShuffleValue for $t {
            #[inline(always)]
            fn shuffle(self, shuffle: impl Fn(u32) -> u32) -> Self {
                <$t>::from_ne_bytes(shuffle(u32::from_ne_bytes(self.to_ne_bytes())).to_ne_bytes())
            }
        }
    )*};
}
macro_rules! shuffle_64 {
    ($($t:ty),*) => {$(
        impl ShuffleValue for $t {
            #[inline(always)]
            fn shuffle(self, shuffle: impl Fn(u32) -> u32) -> Self {
                let bits = u64::from_ne_bytes(self.to_ne_bytes());
                let lo = shuffle(bits as u32) as u64;
                let hi = shuffle((bits >> 32) as u32) as u64;
                <$t>::from_ne_bytes((hi << 32 | lo).to_ne_bytes())
            }
        }
    )*};
}
shuffle_32!(f32);
impl ShuffleValue for u32 {
    #[inline(always)]
    fn shuffle(self, shuffle: impl Fn(u32) -> u32) -> Self {
        shuffle(self)
    }
    redux_32!(u32, redux_add_u32, redux_min_u32, redux_max_u32, redux_and_u32, redux_or_u32, redux_xor_u32);
}
impl ShuffleValue for i32 {
    #[inline(always)]
    fn shuffle(self, shuffle: impl Fn(u32) -> u32) -> Self {
        shuffle(self as u32) as i32
    }
    redux_32!(i32, redux_add_i32, redux_min_i32, redux_max_i32, redux_and_i32, redux_or_i32, redux_xor_i32);
}
shuffle_64!(f64, u64, i64);

/// `v`'s bits as `shuffle` moves them: one 32-bit word (`None` above it) for
/// a value of up to 4 bytes, two (low word first) for one of 8. The
/// identity "shuffle" records the words; after inlining it is a move.
#[inline(always)]
fn words<T: ShuffleValue>(v: T) -> (u32, Option<u32>) {
    let seen = [core::cell::Cell::new(0u32), core::cell::Cell::new(0u32)];
    let count = core::cell::Cell::new(0usize);
    v.shuffle(|w| {
        seen[count.get() & 1].set(w);
        count.set(count.get() + 1);
        w
    });
    (seen[0].get(), (core::mem::size_of::<T>() > 4).then(|| seen[1].get()))
}

/// `match.any.sync` over the lanes of `mask`: the lanes (warp positions)
/// whose `v` has this lane's bits.
///
/// # Safety
/// As `arch::match_any_b32`: this lane is in `mask`, and every lane of it makes the same call.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub(super) unsafe fn match_any_lanes<T: ShuffleValue>(mask: u32, v: T) -> u32 {
    // SAFETY: the caller's contract.
    match words(v) {
        (lo, None) => unsafe { arch::match_any_b32(mask, lo) },
        (lo, Some(hi)) => unsafe { arch::match_any_b64(mask, (hi as u64) << 32 | lo as u64) },
    }
}

/// `match.all.sync` over the lanes of `mask`: `mask` if every lane of it has
/// this lane's bits, else 0.
///
/// # Safety
/// As [`match_any_lanes`].
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub(super) unsafe fn match_all_lanes<T: ShuffleValue>(mask: u32, v: T) -> u32 {
    // SAFETY: the caller's contract.
    match words(v) {
        (lo, None) => unsafe { arch::match_all_b32(mask, lo) }.0,
        (lo, Some(hi)) => unsafe { arch::match_all_b64(mask, (hi as u64) << 32 | lo as u64) }.0,
    }
}

/// A tile of `N` consecutive threads of a block, `N` in 1, 2, 4, 8, 16, 32
/// (`cg::thread_block_tile<N>`).
///
/// Every member must take part in each collective call (shuffles, votes,
/// [`reduce`]); a tile used in a branch that not all of its threads reach is
/// the deadlock the guide warns about.
///
/// ```no_run
/// use cg_kernel::cg::{Plus, ThreadBlock, reduce, tiled_partition};
///
/// /// C++: `auto tile = cg::tiled_partition<32>(block); return cg::reduce(tile, v, cg::plus<float>());`
/// fn warp_total(block: &ThreadBlock, v: f32) -> f32 {
///     let tile = tiled_partition::<32>(block);
///     let total = reduce(&tile, v, Plus); // every lane gets the tile's sum
///     let lane0 = tile.shfl(v, 0); // lane 0's value, in every lane
///     total + 0.0 * lane0
/// }
/// ```
pub struct ThreadBlockTile<const N: u32> {
    block_rank: u32,
    block_threads: u32,
}

/// A tile size, as a type: `TileSize<32>` is a [`ValidTileSize`], `TileSize<24>` is not.
#[doc(hidden)]
pub struct TileSize<const N: u32>;

/// The tile sizes `tiled_partition` accepts: 1, 2, 4, 8, 16 and 32. `#[kernel]`
/// checks a kernel's `TILE` default against it, so that a tile of 24 is an
/// error at the kernel's own signature.
#[diagnostic::on_unimplemented(
    message = "`{Self}`: a tile is 1, 2, 4, 8, 16 or 32 threads",
    label = "the kernel's TILE, which tiled_partition::<TILE> cuts the block by: use 1, 2, 4, 8, 16 or 32",
    note = "C++'s cg::tiled_partition<N> takes the same sizes: a power of two up to one warp"
)]
pub trait ValidTileSize {}

macro_rules! valid_tile_sizes {
    ($($n:literal),*) => {$( impl ValidTileSize for TileSize<$n> {} )*};
}
valid_tile_sizes!(1, 2, 4, 8, 16, 32);

/// Compiles only for a [`ValidTileSize`]: `#[kernel]` calls it with a kernel's `TILE` default.
#[doc(hidden)]
pub const fn assert_tile_size<const N: u32>()
where
    TileSize<N>: ValidTileSize,
{
}

/// Cuts the block into tiles of `N` threads (`cg::tiled_partition<N>(block)`).
/// A size that is not a power of two up to 32 does not compile.
///
/// The block must be a whole number of tiles: a block of 48 threads cut
/// into tiles of 32 has a last tile of 16, whose shuffles name lanes that
/// do not exist. This project's host launches only blocks of whole warps
/// (a multiple of every tile size) and refuses any other by name; a host of
/// your own must do the same (`docs/abi.md`). A check here, one compare and
/// a trap, cost the conjugate-gradient solver's watched entry 25 registers
/// (ptxas 12.9, sm_90, 2026-12-03), so the rule is kept at the launch.
#[inline(always)]
pub fn tiled_partition<const N: u32>(block: &ThreadBlock) -> ThreadBlockTile<N> {
    const { assert!(N.is_power_of_two() && N <= 32, "tile sizes are 1, 2, 4, 8, 16 or 32") };
    #[cfg(not(target_arch = "nvptx64"))]
    cg_emulator::thread::tile_made(N);
    ThreadBlockTile { block_rank: block.thread_rank(), block_threads: block.num_threads() }
}

// SAFETY (for every collective below): the mask is this thread's own tile, so
// the calling lane is in it; the tile's other members reaching the same call is
// the contract this type documents, and a collective touches no memory.
impl<const N: u32> ThreadBlockTile<N> {
    #[inline(always)]
    fn mask(&self) -> u32 {
        tile_mask(arch::lane_id(), N)
    }

    /// Waits for the tile's threads; their writes before it are visible to each
    /// other after it (`tile.sync()`, `__syncwarp(mask)`).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn sync(&self) {
        emu_call!("tile.sync()");
        // SAFETY: see above.
        unsafe { arch::sync_warp(self.mask()) }
    }

    /// This thread's rank in the tile, 0..N (`tile.thread_rank()`).
    #[inline(always)]
    pub fn thread_rank(&self) -> u32 {
        self.block_rank % N
    }

    /// `N` (`tile.num_threads()`).
    #[inline(always)]
    pub const fn num_threads(&self) -> u32 {
        N
    }

    /// `N` (`tile.size()`, the older C++ name of [`num_threads`](Self::num_threads)).
    #[inline(always)]
    pub const fn size(&self) -> u32 {
        N
    }

    /// Which tile of the block this is (`tile.meta_group_rank()`).
    #[inline(always)]
    pub fn meta_group_rank(&self) -> u32 {
        self.block_rank / N
    }

    /// How many tiles the block was cut into (`tile.meta_group_size()`).
    #[inline(always)]
    pub fn meta_group_size(&self) -> u32 {
        self.block_threads.div_ceil(N)
    }

    /// `v` from the tile's thread of rank `src % N` (`tile.shfl(v, src)`).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn shfl<T: ShuffleValue>(&self, v: T, src: u32) -> T {
        emu_call!("tile.shfl()");
        let mask = self.mask();
        // SAFETY: see above.
        v.shuffle(|w| unsafe { arch::shfl_idx(mask, w, src, shfl_c(N, false)) })
    }

    /// `v` from rank `thread_rank() + delta`, or this thread's own `v` past the
    /// end of the tile (`tile.shfl_down(v, delta)`).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn shfl_down<T: ShuffleValue>(&self, v: T, delta: u32) -> T {
        emu_call!("tile.shfl_down()");
        let mask = self.mask();
        // SAFETY: see above.
        v.shuffle(|w| unsafe { arch::shfl_down(mask, w, delta, shfl_c(N, false)) })
    }

    /// `v` from rank `thread_rank() - delta`, or this thread's own `v` before
    /// the start of the tile (`tile.shfl_up(v, delta)`).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn shfl_up<T: ShuffleValue>(&self, v: T, delta: u32) -> T {
        emu_call!("tile.shfl_up()");
        let mask = self.mask();
        // SAFETY: see above.
        v.shuffle(|w| unsafe { arch::shfl_up(mask, w, delta, shfl_c(N, true)) })
    }

    /// `v` from rank `thread_rank() ^ lane_mask` (`tile.shfl_xor(v, lane_mask)`).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn shfl_xor<T: ShuffleValue>(&self, v: T, lane_mask: u32) -> T {
        emu_call!("tile.shfl_xor()");
        let mask = self.mask();
        // SAFETY: see above.
        v.shuffle(|w| unsafe { arch::shfl_xor(mask, w, lane_mask, shfl_c(N, false)) })
    }

    /// Bit `r` set where the tile's rank-`r` thread has `pred` (`tile.ballot(pred)`).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn ballot(&self, pred: bool) -> u32 {
        emu_call!("tile.ballot()");
        let mask = self.mask();
        // SAFETY: see above.
        unsafe { arch::ballot(mask, pred) >> mask.trailing_zeros() }
    }

    /// Whether any thread of the tile has `pred` (`tile.any(pred)`).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn any(&self, pred: bool) -> bool {
        emu_call!("tile.any()");
        // SAFETY: see above.
        unsafe { arch::ballot(self.mask(), pred) != 0 }
    }

    /// Whether every thread of the tile has `pred` (`tile.all(pred)`).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn all(&self, pred: bool) -> bool {
        emu_call!("tile.all()");
        let mask = self.mask();
        // SAFETY: see above.
        unsafe { arch::ballot(mask, pred) == mask }
    }

    /// Bit `r` set where the tile's rank-`r` thread has the same `v` as this
    /// one, this thread's own bit included (`tile.match_any(v)`, sm_70+).
    /// Values compare by their bits, as C++'s do: `-0.0` and `0.0` differ, a
    /// NaN matches the same NaN. One `match.any.sync.b32` (`.b64` for an
    /// 8-byte value).
    ///
    /// ```no_run
    /// use cg_kernel::cg::{ThreadBlockTile, ffs, popc};
    ///
    /// /// How many threads of the tile hold `key`, and whether this one is the
    /// /// first of them (the one to write for the group, say).
    /// fn group_of(tile: &ThreadBlockTile<32>, key: u32) -> (u32, bool) {
    ///     let peers = tile.match_any(key);
    ///     (popc(peers), ffs(peers) - 1 == tile.thread_rank())
    /// }
    /// ```
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn match_any<T: ShuffleValue>(&self, v: T) -> u32 {
        emu_call!("tile.match_any()");
        let mask = self.mask();
        // SAFETY: see above.
        unsafe { match_any_lanes(mask, v) >> mask.trailing_zeros() }
    }

    /// Whether every thread of the tile has the same `v`, and the tile's ranks
    /// as a mask if so, `0` if not (`tile.match_all(v, pred)`, sm_70+: C++
    /// returns the mask and sets `pred`; here both come back). Values compare
    /// by their bits. One `match.all.sync.b32` (`.b64` for an 8-byte value).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn match_all<T: ShuffleValue>(&self, v: T) -> (u32, bool) {
        emu_call!("tile.match_all()");
        let mask = self.mask();
        // SAFETY: see above.
        let lanes = unsafe { match_all_lanes(mask, v) } >> mask.trailing_zeros();
        (lanes, lanes != 0)
    }

    /// [`reduce`] as a method.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn reduce<T: ShuffleValue, Op: const ReduceOp<T>>(&self, v: T, op: Op) -> T {
        reduce(self, v, op)
    }
}

/// Combines `v` over the tile and returns the result to every thread
/// (`cg::reduce(tile, v, op)`).
///
/// On sm_80 and newer, 32-bit integer `Plus`, `Less` and `Greater` are one
/// `redux.sync` instruction; everything else, floats on every architecture
/// included, is a butterfly of `log2(N)` `shfl.sync.bfly` steps. The butterfly
/// combines in a fixed order, so a float result is the same on every run and in
/// every lane.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn reduce<const N: u32, T: ShuffleValue, Op: const ReduceOp<T>>(tile: &ThreadBlockTile<N>, v: T, _op: Op) -> T {
    emu_call!("cg::reduce()");
    // SAFETY: the tile's own mask; see `ThreadBlockTile`.
    if let Some(r) = unsafe { hardware::<T, Op>(tile.mask(), v) } {
        return r;
    }
    // The butterfly's steps over lane masks N / 2 down to 1, written out
    // rather than as a loop, so that the five shuffles are straight-line code
    // whatever the optimizer decides about unrolling (the build sets no
    // unrolling option); a step whose mask is not below N folds away.
    let step = |v: T, lane_mask: u32| if lane_mask < N { Op::combine(v, tile.shfl_xor(v, lane_mask)) } else { v };
    step(step(step(step(step(v, 16), 8), 4), 2), 1)
}
