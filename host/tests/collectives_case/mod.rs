//! The collective algorithms on a device, against a CPU model (`mod
//! collectives_case;`): what the emulator's test (`collectives.rs`) and the
//! GPU's (`gpu_collectives.rs`) share.
//!
//! The kernels (`gpu/src/kernels/collectives.rs`) write, for each thread,
//! each tile size and each operator, `cg::reduce`, `cg::inclusive_scan`,
//! `cg::exclusive_scan` and the matches; and for a block and a tile size,
//! `block_reduce` and the two block scans with their totals. The model
//! computes each one in the order the library combines (the butterfly, the
//! Hillis-Steele steps, the tiles' totals), so every result is compared bit
//! for bit, floats included. That the model's order computes the operator at
//! all is checked apart, on integers, where every order gives one answer
//! (`the_model_agrees_with_a_plain_fold_on_integers`).

#![allow(dead_code, reason = "each test binary uses part of it")]

use gpu::kernels::KernelDef;
use gpu::kernels::NoGridSync;
use gpu::kernels::collectives::{self as k, BLOCK_VALUES_PER_OP, COLLECTIVE_TILES, FLOAT_OPS, INTEGER_OPS, TILE_MASKS, TILE_VALUES_PER_OP};
use gpu::mem::{In, Out};
use host::device::Gpu;
use std::fmt::Debug;

/// The operators, in the kernels' order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Plus,
    Less,
    Greater,
    BitAnd,
    BitOr,
    BitXor,
}

const ALL_OPS: [Op; 6] = [Op::Plus, Op::Less, Op::Greater, Op::BitAnd, Op::BitOr, Op::BitXor];

/// A small random generator (splitmix64), so that a failure repeats.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

type TileParams<T> = (In<T>, Out<T>, Out<u32>);
type BlockParams<T> = (In<T>, Out<T>);

/// An element type the kernels take: its operators, as the model computes them.
pub trait Elem: host::device::Pod + Copy + Debug + Send + Sync + 'static {
    const NAME: &'static str;
    const INTEGER: bool;
    fn combine(op: Op, a: Self, b: Self) -> Self;
    fn identity(op: Op) -> Self;
    fn bits(self) -> u64;
    /// A random value: any bits for an integer, a float of either sign over
    /// 20 binary orders of magnitude (no zero, no NaN).
    fn random(rng: &mut Rng) -> Self;
    /// Five values, some of which differ only in the high word of a 64-bit type.
    fn pool() -> [Self; 5];
    fn tile_def() -> KernelDef<TileParams<Self>, NoGridSync>;
    /// The block kernel: tiles of 32 in the GPU's module.
    fn block_def() -> KernelDef<BlockParams<Self>, NoGridSync>;
    /// The block kernel with tiles of 1 in the GPU's module.
    fn block_def_tiles_of_1() -> KernelDef<BlockParams<Self>, NoGridSync>;
    /// The host's sum as an `f64`, for a float's sanity bound.
    fn as_f64(self) -> f64;
}

pub fn ops<T: Elem>() -> &'static [Op] {
    if T::INTEGER { &ALL_OPS } else { &ALL_OPS[..3] }
}

macro_rules! integer {
    ($t:ty, $tile:ident, $block:ident, $small:ident, $pool:expr) => {
        impl Elem for $t {
            const NAME: &'static str = stringify!($t);
            const INTEGER: bool = true;
            fn combine(op: Op, a: $t, b: $t) -> $t {
                match op {
                    Op::Plus => a.wrapping_add(b),
                    Op::Less => a.min(b),
                    Op::Greater => a.max(b),
                    Op::BitAnd => a & b,
                    Op::BitOr => a | b,
                    Op::BitXor => a ^ b,
                }
            }
            fn identity(op: Op) -> $t {
                match op {
                    Op::Plus | Op::BitOr | Op::BitXor => 0,
                    Op::Less => <$t>::MAX,
                    Op::Greater => <$t>::MIN,
                    Op::BitAnd => !0,
                }
            }
            fn bits(self) -> u64 {
                self as u64
            }
            fn random(rng: &mut Rng) -> $t {
                rng.next() as $t
            }
            fn pool() -> [$t; 5] {
                $pool
            }
            fn tile_def() -> KernelDef<TileParams<$t>, NoGridSync> {
                k::$tile
            }
            fn block_def() -> KernelDef<BlockParams<$t>, NoGridSync> {
                k::$block
            }
            fn block_def_tiles_of_1() -> KernelDef<BlockParams<$t>, NoGridSync> {
                k::$small
            }
            fn as_f64(self) -> f64 {
                self as f64
            }
        }
    };
}
integer!(u32, TILE_COLLECTIVES_U32, BLOCK_COLLECTIVES_U32, BLOCK_COLLECTIVES_U32_TILES_OF_1, [7, 0xdead_beef, 0, u32::MAX, 0x8000_0001]);
integer!(i32, TILE_COLLECTIVES_I32, BLOCK_COLLECTIVES_I32, BLOCK_COLLECTIVES_I32_TILES_OF_1, [7, -7, 0, i32::MIN, i32::MAX]);
integer!(u64, TILE_COLLECTIVES_U64, BLOCK_COLLECTIVES_U64, BLOCK_COLLECTIVES_U64_TILES_OF_1, [7, 7 | 1 << 32, 1 << 32, u64::MAX, 0xdead_beef]);
integer!(i64, TILE_COLLECTIVES_I64, BLOCK_COLLECTIVES_I64, BLOCK_COLLECTIVES_I64_TILES_OF_1, [-7, -7 ^ (1 << 40), 0, i64::MIN, 1 << 40]);

macro_rules! float {
    ($t:ty, $tile:ident, $block:ident, $small:ident, $pool:expr) => {
        impl Elem for $t {
            const NAME: &'static str = stringify!($t);
            const INTEGER: bool = false;
            fn combine(op: Op, a: $t, b: $t) -> $t {
                match op {
                    Op::Plus => a + b,
                    Op::Less => {
                        if b < a {
                            b
                        } else {
                            a
                        }
                    }
                    Op::Greater => {
                        if b > a {
                            b
                        } else {
                            a
                        }
                    }
                    _ => unreachable!("no bitwise operator on floats"),
                }
            }
            fn identity(op: Op) -> $t {
                match op {
                    Op::Plus => 0.0,
                    Op::Less => <$t>::INFINITY,
                    Op::Greater => <$t>::NEG_INFINITY,
                    _ => unreachable!("no bitwise operator on floats"),
                }
            }
            fn bits(self) -> u64 {
                self.to_bits() as u64
            }
            fn random(rng: &mut Rng) -> $t {
                let unit = (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
                let sign = if rng.below(2) == 0 { 1.0 } else { -1.0 };
                (sign * (0.5 + unit) * (1u64 << rng.below(20)) as f64) as $t
            }
            fn pool() -> [$t; 5] {
                $pool
            }
            fn tile_def() -> KernelDef<TileParams<$t>, NoGridSync> {
                k::$tile
            }
            fn block_def() -> KernelDef<BlockParams<$t>, NoGridSync> {
                k::$block
            }
            fn block_def_tiles_of_1() -> KernelDef<BlockParams<$t>, NoGridSync> {
                k::$small
            }
            fn as_f64(self) -> f64 {
                self as f64
            }
        }
    };
}
// 1.5, 3.0 and 0.75 have the same low word (0) as doubles: only a 64-bit match tells them apart.
float!(f32, TILE_COLLECTIVES_F32, BLOCK_COLLECTIVES_F32, BLOCK_COLLECTIVES_F32_TILES_OF_1, [1.5, 3.0, -0.75, 100.25, 1e-3]);
float!(f64, TILE_COLLECTIVES_F64, BLOCK_COLLECTIVES_F64, BLOCK_COLLECTIVES_F64_TILES_OF_1, [1.5, 3.0, 0.75, -2.5, 1e-3]);

/// How the inputs are drawn.
#[derive(Clone, Copy, Debug)]
pub enum Draw {
    /// Any value.
    Random,
    /// From five values, and every fourth warp all one value: for the
    /// matches, and for ties in the minimum and maximum.
    Pool,
}

pub fn inputs<T: Elem>(seed: u64, n: usize, draw: Draw) -> Vec<T> {
    let mut rng = Rng(seed);
    let pool = T::pool();
    (0..n)
        .map(|i| match draw {
            Draw::Random => T::random(&mut rng),
            Draw::Pool if (i / 32) % 4 == 3 => pool[(i / 128) % 5],
            Draw::Pool => pool[rng.below(5) as usize],
        })
        .collect()
}

// ---- the model: the library's orders, on the CPU ----

/// `cg::reduce` over one tile's values, as each lane ends it: the butterfly
/// over lane masks N/2 down to 1, each lane combining its value with its partner's.
pub fn butterfly<T: Elem>(op: Op, xs: &[T]) -> Vec<T> {
    let n = xs.len();
    let mut x = xs.to_vec();
    let mut m = n / 2;
    while m >= 1 {
        x = (0..n).map(|q| T::combine(op, x[q], x[q ^ m])).collect();
        m /= 2;
    }
    x
}

/// `cg::inclusive_scan` over one tile's values: Hillis-Steele over
/// distances 1, 2, 4, ..., each rank's value combined with the lower rank's.
pub fn hillis_steele<T: Elem>(op: Op, xs: &[T]) -> Vec<T> {
    let n = xs.len();
    let mut x = xs.to_vec();
    let mut d = 1;
    while d < n {
        x = (0..n).map(|q| if q >= d { T::combine(op, x[q], x[q - d]) } else { x[q] }).collect();
        d *= 2;
    }
    x
}

/// `cg::exclusive_scan` from the inclusive scan: the rank below's, the
/// identity at rank 0 (integer `Plus` and `BitXor` subtract or xor, which
/// gives the same integers).
pub fn exclusive<T: Elem>(op: Op, inclusive: &[T]) -> Vec<T> {
    (0..inclusive.len()).map(|q| if q == 0 { T::identity(op) } else { inclusive[q - 1] }).collect()
}

/// The tile collectives for every thread of a block of `vs.len()`, tiles of `n`.
pub struct TileExpected<T> {
    pub reduce: Vec<T>,
    pub inclusive: Vec<T>,
    pub exclusive: Vec<T>,
}

pub fn tile_model<T: Elem>(op: Op, n: usize, vs: &[T]) -> TileExpected<T> {
    let mut e = TileExpected { reduce: vec![], inclusive: vec![], exclusive: vec![] };
    for tile in vs.chunks(n) {
        e.reduce.extend(butterfly(op, tile));
        let inc = hillis_steele(op, tile);
        e.exclusive.extend(exclusive(op, &inc));
        e.inclusive.extend(inc);
    }
    e
}

/// `match_any` and `match_all` (mask, predicate) for every thread, tiles of `n`.
pub fn match_model<T: Elem>(n: usize, vs: &[T]) -> Vec<[u32; 3]> {
    let mut out = Vec::new();
    for tile in vs.chunks(n) {
        let all_same = tile.iter().all(|x| x.bits() == tile[0].bits());
        let whole = if n == 32 { u32::MAX } else { (1u32 << n) - 1 };
        for x in tile {
            let peers = tile.iter().enumerate().filter(|(_, y)| y.bits() == x.bits()).fold(0u32, |m, (q, _)| m | 1 << q);
            out.push(if all_same { [peers, whole, 1] } else { [peers, 0, 0] });
        }
    }
    out
}

/// The block collectives for one block's values, tiles of `n`.
pub struct BlockExpected<T> {
    pub reduce: Vec<T>,
    pub inclusive: Vec<T>,
    pub exclusive: Vec<T>,
    pub total: T,
}

pub fn block_model<T: Elem>(op: Op, n: usize, vs: &[T]) -> BlockExpected<T> {
    const WARP: usize = 32;
    let tiles = vs.len() / n;
    let one_pass = n * WARP >= 1024;
    // block_reduce: each tile's butterfly (lane 0's), then every warp
    // combines the totals, lane l taking l, l + 32, ..., then a butterfly.
    let totals: Vec<T> = vs.chunks(n).map(|t| butterfly(op, t)[0]).collect();
    let acc: Vec<T> = (0..WARP)
        .map(|l| {
            let mut a = if l < tiles { totals[l] } else { T::identity(op) };
            if !one_pass {
                let mut i = l + WARP;
                while i < tiles {
                    a = T::combine(op, a, totals[i]);
                    i += WARP;
                }
            }
            a
        })
        .collect();
    let reduced = butterfly(op, &acc);
    let reduce = (0..vs.len()).map(|r| reduced[r % WARP]).collect();
    // The scans: each tile's Hillis-Steele, its last lane's total; the first
    // warp scans the totals 32 at a time, each chunk after the last one's total.
    let inc: Vec<Vec<T>> = vs.chunks(n).map(|t| hillis_steele(op, t)).collect();
    let sums: Vec<T> = inc.iter().map(|t| t[n - 1]).collect();
    let mut scanned = sums.clone();
    if one_pass {
        let padded: Vec<T> = (0..WARP).map(|l| if l < tiles { sums[l] } else { T::identity(op) }).collect();
        scanned[..tiles].copy_from_slice(&hillis_steele(op, &padded)[..tiles]);
    } else {
        let mut carry = T::identity(op);
        let mut first = 0;
        while first < tiles {
            let padded: Vec<T> = (0..WARP).map(|l| if first + l < tiles { sums[first + l] } else { T::identity(op) }).collect();
            let s: Vec<T> = hillis_steele(op, &padded).into_iter().map(|x| T::combine(op, carry, x)).collect();
            for l in 0..WARP {
                if first + l < tiles {
                    scanned[first + l] = s[l];
                }
            }
            carry = s[WARP - 1];
            first += WARP;
        }
    }
    let before = |t: usize| if t == 0 { T::identity(op) } else { scanned[t - 1] };
    let mut inclusive = Vec::new();
    let mut exclusive_ = Vec::new();
    for (t, tile) in inc.iter().enumerate() {
        let exc = exclusive(op, tile);
        for q in 0..n {
            inclusive.push(T::combine(op, before(t), tile[q]));
            exclusive_.push(T::combine(op, before(t), exc[q]));
        }
    }
    BlockExpected { reduce, inclusive, exclusive: exclusive_, total: scanned[tiles - 1] }
}

// ---- the checks ----

fn same<T: Elem>(got: T, want: T) -> bool {
    got.bits() == want.bits()
}

/// Runs the tile kernel of `T` on `blocks` blocks of `threads` and checks
/// every thread's every result against the model.
pub fn check_tiles<T: Elem>(gpu: &Gpu, blocks: u32, threads: u32, draw: Draw, seed: u64) {
    let ops = ops::<T>();
    assert_eq!(ops.len(), if T::INTEGER { INTEGER_OPS.len() } else { FLOAT_OPS.len() });
    let n = (blocks * threads) as usize;
    let xs = inputs::<T>(seed, n, draw);
    let per_thread = COLLECTIVE_TILES.len() * ops.len() * TILE_VALUES_PER_OP;
    let kernel = gpu.kernel(&T::tile_def()).unwrap();
    let input = gpu.upload(&xs).unwrap();
    let mut values = gpu.zeros::<T>(n * per_thread).unwrap();
    let mut masks = gpu.zeros::<u32>(n * COLLECTIVE_TILES.len() * TILE_MASKS).unwrap();
    // SAFETY: one input per thread, and the outputs sized as the kernel writes them.
    unsafe { kernel.launch(blocks, threads, (&input.slice(..), values.slice_mut(..), masks.slice_mut(..))).unwrap() };
    let values = gpu.read(&values).unwrap();
    let masks = gpu.read(&masks).unwrap();
    for (b, block) in xs.chunks(threads as usize).enumerate() {
        for (ti, &tile) in COLLECTIVE_TILES.iter().enumerate() {
            let tile = tile as usize;
            for (oi, &op) in ops.iter().enumerate() {
                let e = tile_model(op, tile, block);
                for (r, x) in block.iter().enumerate() {
                    let at = (b * threads as usize + r) * per_thread + (ti * ops.len() + oi) * TILE_VALUES_PER_OP;
                    let wants = [("reduce", e.reduce[r]), ("inclusive_scan", e.inclusive[r]), ("exclusive_scan", e.exclusive[r])];
                    for (j, (what, want)) in wants.into_iter().enumerate() {
                        let got = values[at + j];
                        assert!(
                            same(got, want),
                            "{} {op:?} {what} on tiles of {tile}, block {b} of {threads} threads, thread {r}: got {got:?}, the model {want:?} ({draw:?} input {x:?})",
                            T::NAME,
                        );
                    }
                }
            }
            for (r, want) in match_model(tile, block).into_iter().enumerate() {
                let at = ((b * threads as usize + r) * COLLECTIVE_TILES.len() + ti) * TILE_MASKS;
                assert_eq!(
                    masks[at..at + TILE_MASKS],
                    want,
                    "{} match_any, match_all (mask, predicate) on tiles of {tile}, block {b}, thread {r} ({draw:?} input)",
                    T::NAME
                );
            }
        }
    }
}

/// Runs the block kernel of `T` on `blocks` blocks of `threads`, tiles of
/// `tile`, and checks every thread's results against the model. The GPU's
/// module has tiles of 32 and of 1; the emulator runs any.
pub fn check_blocks<T: Elem>(gpu: &Gpu, blocks: u32, threads: u32, tile: u32, seed: u64) {
    let ops = ops::<T>();
    let n = (blocks * threads) as usize;
    let xs = inputs::<T>(seed, n, if seed.is_multiple_of(2) { Draw::Random } else { Draw::Pool });
    let per_thread = ops.len() * BLOCK_VALUES_PER_OP;
    let def = if tile == 1 { T::block_def_tiles_of_1() } else { T::block_def().with_tile(tile).expect("a tile size") };
    assert_eq!(def.tile(), Some(tile));
    assert_eq!(def.shared_bytes(threads) as usize, (threads / tile) as usize * size_of::<T>(), "the scratch holds one T per tile");
    let kernel = gpu.kernel(&def).unwrap();
    let input = gpu.upload(&xs).unwrap();
    let mut values = gpu.zeros::<T>(n * per_thread).unwrap();
    // SAFETY: one input per thread, and the output sized as the kernel writes it.
    unsafe { kernel.launch(blocks, threads, (&input.slice(..), values.slice_mut(..))).unwrap() };
    let values = gpu.read(&values).unwrap();
    for (b, block) in xs.chunks(threads as usize).enumerate() {
        for (oi, &op) in ops.iter().enumerate() {
            let e = block_model(op, tile as usize, block);
            for r in 0..threads as usize {
                let at = (b * threads as usize + r) * per_thread + oi * BLOCK_VALUES_PER_OP;
                let want = [e.reduce[r], e.inclusive[r], e.total, e.exclusive[r], e.total];
                let names = ["block_reduce", "block_inclusive_scan", "block_inclusive_scan's total", "block_exclusive_scan", "block_exclusive_scan's total"];
                for j in 0..BLOCK_VALUES_PER_OP {
                    let got = values[at + j];
                    assert!(
                        same(got, want[j]),
                        "{} {:?} {} on tiles of {tile}, block {b} of {threads} threads, thread {r}: got {got:?}, the model {:?}",
                        T::NAME,
                        op,
                        names[j],
                        want[j]
                    );
                }
            }
        }
    }
}

/// The model against a plain left-to-right fold, on integers (where every
/// order of an associative, commutative operator gives one answer), and a
/// float sum against the exact one within a bound: the model computes the
/// operators, not only some order of them.
pub fn check_the_model<T: Elem>(seed: u64) {
    for &op in ops::<T>() {
        for threads in [32usize, 96, 1024] {
            for n in COLLECTIVE_TILES.map(|t| t as usize) {
                let vs = inputs::<T>(seed ^ threads as u64 ^ (n as u64) << 16, threads, Draw::Random);
                let fold = |xs: &[T]| xs.iter().fold(T::identity(op), |a, &b| T::combine(op, a, b));
                let t = tile_model(op, n, &vs);
                let b = block_model(op, n, &vs);
                for r in 0..threads {
                    let tile = &vs[r / n * n..r / n * n + n];
                    let q = r % n;
                    let inc = fold(&tile[..=q]);
                    let exc = fold(&tile[..q]);
                    let binc = fold(&vs[..=r]);
                    let bexc = fold(&vs[..r]);
                    if T::INTEGER {
                        assert!(same(t.reduce[r], fold(tile)) && same(t.inclusive[r], inc) && same(t.exclusive[r], exc), "{op:?} tile {n} thread {r}");
                        assert!(same(b.reduce[r], fold(&vs)) && same(b.inclusive[r], binc) && same(b.exclusive[r], bexc), "{op:?} block, tile {n}, thread {r}");
                    } else {
                        // Within the error of any order of the additions; the
                        // minimum and maximum are exact in any order.
                        let bound = |xs: &[T]| if op == Op::Plus { 1e-6 * xs.len() as f64 * xs.iter().map(|x| x.as_f64().abs()).sum::<f64>() } else { 0.0 };
                        let close = |got: T, want: T, xs: &[T]| (got.as_f64() - want.as_f64()).abs() <= bound(xs) || got.as_f64() == want.as_f64();
                        assert!(close(b.inclusive[r], binc, &vs[..=r]) && close(b.reduce[r], fold(&vs), &vs), "{op:?} block, tile {n}, thread {r}");
                        assert!(close(t.exclusive[r], exc, &tile[..q]), "{op:?} tile {n}, thread {r}");
                    }
                }
                assert!(same(b.total, fold(&vs)) || !T::INTEGER);
            }
        }
    }
}
