//! The conjugate-gradient solve whose vectors never leave the chip: one
//! cooperative launch, one `grid.sync()` per iteration, and each block's
//! slice of x, r, p and A p held in its shared memory for the whole solve
//! (`docs/conjugate-gradient.md`, "The on-chip solver").
//!
//! NVIDIA's `conjugateGradientMultiBlockCG` keeps its vectors in device
//! memory and reads them back at every step; so do
//! [`conjugate_gradient_persistent`](super::conjugate_gradient::conjugate_gradient_persistent)
//! and the fused kernels. Here block `b` owns rows `b * slice ..` up to
//! `(b + 1) * slice` for the whole solve. What crosses the chip per
//! iteration is only what another block needs:
//! - the block's partial sums of four dot products (and, every
//!   [`CHECK_EVERY`] iterations, of the true residual), through one
//!   `grid.reduce_array` of the five, whose grid barrier is the iteration's;
//! - r at the rows within `2 * band` of the slice's edges, in `exchange`,
//!   where `band` is the matrix's bandwidth (the largest |row − column| it
//!   stores: 1 tridiagonal, m for the m x m Poisson grid). A block keeps p
//!   at the 2 `band` rows each side of its slice and r at the nearer
//!   `band`, and computes them itself each iteration, with the owner's
//!   arithmetic, so both hold the same bits: only r at the farther `band`
//!   rows comes from the owner.
//!
//! One reduction per iteration: with p' = r + beta p and s = A p kept from
//! the iteration before, p'·A p' = r·A r + 2 beta r·s + beta² p·s (A
//! symmetric), so r·r, w·r (w = A r), r·s and p·s, summed together, give
//! both beta and alpha. Chronopoulos and Gear's recurrence (the fused
//! kernels') keeps s = A p by s = w + beta s; in f32 that drifts, and on
//! Poisson it needs 994 iterations where the classic one needs 770 at
//! m = 512, with these four sums too (998); Ghysels and Vanroose's did not
//! converge in 20,000 (`records/2026-12-06-cpu-one-reduction/`). This one
//! multiplies A p afresh and takes the classic count. The price is a
//! second product per iteration, from shared memory.

use super::conjugate_gradient::{BREAKDOWN, MAX_ITERATIONS, PARTIALS, TOLERANCE_SQUARED, write_result};
use crate::cg::{Cooperative, GridGroup, Plus, this_grid, this_thread_block};
use crate::kernel;
use crate::mem::{DynamicShared, In, Out, dynamic_shared};

/// Values each block adds up per iteration: r·r, w·r, r·s, p·s, and the
/// true residual's square (0 except after a check).
pub const SUMS: usize = 5;
/// `state[RESTARTS]`: times the drift guard restarted the recurrence (beta = 0).
pub const RESTARTS: usize = PARTIALS;
/// `state[TRUE_RESIDUAL]`: ‖b − A x‖² at the last check, computed on the GPU.
pub const TRUE_RESIDUAL: usize = PARTIALS + 1;
/// `state[CHECKS]`: true residuals computed.
pub const CHECKS: usize = PARTIALS + 2;
/// The scalars' end: `state` holds `SUMS_AT` values (the partials of the
/// five sums cross the chip in the grid reduce's own memory).
pub const SUMS_AT: usize = PARTIALS + 3;
/// Every this many iterations the kernel computes ‖b − A x‖ (the drift
/// guard): x's rows near the slice's edges cross with the iteration's
/// partials, so the check adds no barrier.
pub const CHECK_EVERY: u32 = 32;
/// Vectors of `n` in `exchange`: r and x, for each of two alternate iterations.
pub const EXCHANGE_VECTORS: usize = 4;
/// Vectors of a slice in shared memory: x, r, p and s = A p.
pub const SLICE_VECTORS: u32 = 4;
/// Rows of the halo's outer band whose r each thread loads before the
/// partials' sum (the rest it loads after).
const STASH: usize = 4;

/// Where the matrix is read from.
pub mod source {
    /// CSR in device memory, every iteration.
    pub const GLOBAL: u32 = 0;
    /// CSR: the slice's rows copied into shared memory at the start.
    pub const SHARED: u32 = 1;
    /// No matrix: the 5-point Laplacian of an m x m grid, computed.
    pub const STENCIL: u32 = 2;
}

/// The mistakes [`solve_on_chip`] can be built with, for the tests.
pub mod mistake {
    /// None.
    pub const NONE: u32 = 0;
    /// The halo read before the grid reduce whose barrier publishes it: a
    /// block reads a neighbour's rows before the neighbour wrote them.
    pub const NO_SYNC: u32 = 1;
    /// The halo written after the grid reduce's barrier instead of before:
    /// a neighbour reads it before its owner wrote it.
    pub const HALO_AFTER_SYNC: u32 = 2;
}

/// Bytes of dynamic shared memory a block needs: the slice's four vectors, 4 `band` rows of p and 2 `band` of r around it,
/// and with `nnz` stored values, the slice's CSR rows (offsets, columns,
/// values); 8 bytes of slack for alignment.
pub const fn on_chip_bytes(slice: u32, band: u32, nnz: u32) -> u64 {
    let words = SLICE_VECTORS as u64 * slice as u64 + 6 * band as u64;
    let matrix = if nnz == 0 { 0 } else { slice as u64 + 1 + 2 * nnz as u64 };
    4 * (words + matrix) + 8
}

/// One block's part of the solve: where its rows are, in the matrix and in
/// shared memory.
#[derive(Clone, Copy)]
struct Slice {
    /// Rows of the matrix.
    n: u32,
    /// The block's rows: `lo..hi`.
    lo: u32,
    hi: u32,
    /// `MATRIX == STENCIL`: the grid's side.
    side: u32,
    /// `MATRIX == SHARED`: the slice's row offsets, columns and values.
    offsets: DynamicShared<u32>,
    columns: DynamicShared<u32>,
    values: DynamicShared<f32>,
}

impl Slice {
    /// `v` at column `c`: from the slice's own rows, or from the halo
    /// (`depth` rows each side, `halo` holding 2 `depth`).
    ///
    /// # Safety
    /// `c` is within `depth` rows of the slice, and the halo was written
    /// before a barrier this read follows.
    #[inline(always)]
    unsafe fn at(&self, own: DynamicShared<f32>, halo: DynamicShared<f32>, depth: u32, c: u32) -> f32 {
        // SAFETY: the caller's contract.
        unsafe {
            if c < self.lo {
                halo.read((c + depth - self.lo) as usize)
            } else if c < self.hi {
                own.read((c - self.lo) as usize)
            } else {
                halo.read((depth + c - self.hi) as usize)
            }
        }
    }

    /// Row `i` of A times the vector `v` gives at each column, added in the
    /// matrix's column order (the stencil in CSR's order: up, left, centre,
    /// right, down), so that every source gives the same bits.
    ///
    /// # Safety
    /// `i < n`; `matrix`/`vals` a CSR matrix of `n` rows whose columns are
    /// within `band` of their row (`MATRIX` `GLOBAL` or `SHARED`; `SHARED`
    /// read from shared memory where `i` is the slice's); `v` safe to call
    /// at every column row `i` stores.
    #[inline(always)]
    #[allow(clippy::neg_multiply, reason = "the stencil multiplies as CSR does, value times vector, so both give the same bits")]
    unsafe fn row<const MATRIX: u32>(&self, matrix: In<u32>, vals: In<f32>, i: u32, v: impl Fn(u32) -> f32) -> f32 {
        let mut sum = 0.0f32;
        if MATRIX == source::STENCIL {
            let m = self.side;
            let (y, x) = (i / m, i % m);
            if y > 0 {
                sum += -1.0 * v(i - m);
            }
            if x > 0 {
                sum += -1.0 * v(i - 1);
            }
            sum += 4.0 * v(i);
            if x + 1 < m {
                sum += -1.0 * v(i + 1);
            }
            if y + 1 < m {
                sum += -1.0 * v(i + m);
            }
        } else if MATRIX == source::SHARED && i >= self.lo && i < self.hi {
            // SAFETY: the slice's rows, copied at the start.
            unsafe {
                let base = self.offsets.read(0);
                let (start, end) = (self.offsets.read((i - self.lo) as usize) - base, self.offsets.read((i - self.lo + 1) as usize) - base);
                let mut j = start;
                while j < end {
                    sum += self.values.read(j as usize) * v(self.columns.read(j as usize));
                    j += 1;
                }
            }
        } else {
            // SAFETY: the caller's contract.
            unsafe {
                let (start, end) = (matrix.read(i as usize), matrix.read(i as usize + 1));
                let mut j = start;
                while j < end {
                    sum += vals.read(j as usize) * v(matrix.read((self.n + 1 + j) as usize));
                    j += 1;
                }
            }
        }
        sum
    }
}

/// p' = r + beta p, the same arithmetic wherever a row is computed.
#[inline(always)]
fn next_p(r: f32, p: f32, beta: f32) -> f32 {
    r + beta * p
}

/// r' = r − alpha s.
#[inline(always)]
fn next_r(r: f32, s: f32, alpha: f32) -> f32 {
    r - alpha * s
}

/// The whole solve in one launch, with [`mistake`] `MISTAKE` made on purpose.
///
/// Per iteration, with `exchange` used by alternate iterations (a block
/// may be one iteration ahead of another, never two: the barrier between
/// holds it):
/// 1. w = A r over the slice (r around it from the halo), and the partials
///    of r·r, w·r, r·s, p·s; r and p at the rows within 2 `band` of the
///    slice's edges to `exchange` (and x within `band`, every
///    [`CHECK_EVERY`] iterations);
/// 2. `grid.reduce_array` of the five sums: its grid barrier is the
///    iteration's one, and publishes the halo too;
/// 3. the totals; gamma = r·r; the stop test; beta = gamma / gamma before,
///    p·A p = w·r + 2 beta r·s + beta² p·s, alpha = gamma / p·A p;
/// 4. p = r + beta p over the slice and the 2 `band` rows each side (those
///    from `exchange`); s = A p over the slice; x += alpha p, r −= alpha s;
///    r −= alpha (A p) at the `band` rows each side, for the next product.
///
/// # Safety
/// As [`conjugate_gradient_on_chip`].
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn solve_on_chip<const TILE: u32, const MATRIX: u32, const MISTAKE: u32>(
    grid: &GridGroup<Cooperative>,
    matrix: In<u32>,
    vals: In<f32>,
    vectors: Out<f32>,
    exchange: Out<f32>,
    state: Out<f64>,
    n: usize,
    slice: u32,
    band: u32,
    side: u32,
    nnz: u32,
) {
    let block = this_thread_block();
    let rows = n as u32;
    let lo = (grid.block_rank() as u32).saturating_mul(slice).min(rows);
    let hi = lo.saturating_add(slice).min(rows);
    let (me, threads) = (block.thread_rank(), block.size());
    let x = dynamic_shared::<f32>();
    let s_len = slice as usize;
    let (r, p, s) = (x.after::<f32>(s_len), x.after::<f32>(2 * s_len), x.after::<f32>(3 * s_len));
    let p_halo = x.after::<f32>(4 * s_len);
    let r_halo = p_halo.after::<f32>(4 * band as usize);
    let offsets = r_halo.after::<u32>(2 * band as usize);
    let columns = offsets.after::<u32>(s_len + 1);
    let values = columns.after::<f32>(nnz as usize);
    // Shared memory: x, r, p and s over the slice,
    // p over 4 band rows around it (2 band below lo, 2 band from hi), r over
    // 2 band, and the slice's CSR rows.
    let sl = Slice { n: rows, lo, hi, side, offsets, columns, values };
    // Slot `which` (0 r, 1 x) of the exchange for iteration parity `par`.
    let slot = |par: u32, which: u32| ((par * 2 + which) * rows) as usize;
    // SAFETY (every access below): the caller's contract sizes the buffers
    // and the shared memory; every thread of the block runs every reduction
    // and barrier, outside any branch: the loop's condition and every
    // scalar are the same in every thread of the grid.
    let (tolerance_squared, max_iterations) = unsafe { (state.read(TOLERANCE_SQUARED), state.read(MAX_ITERATIONS) as u32) };
    // x = 0, r = b, p = s = 0 over the slice; r = b around it.
    let mut i = lo + me;
    while i < hi {
        let l = (i - lo) as usize;
        unsafe {
            x.write(l, 0.0);
            r.write(l, vectors.read(n + i as usize));
            p.write(l, 0.0);
            s.write(l, 0.0);
        }
        i += threads;
    }
    let mut h = me;
    while h < 2 * band {
        let c = if h < band { (lo + h).wrapping_sub(band) } else { hi + h - band };
        if (h >= band || lo + h >= band) && c < rows {
            unsafe { r_halo.write(h as usize, vectors.read(n + c as usize)) };
        }
        h += threads;
    }
    let mut h = me;
    while h < 4 * band {
        unsafe { p_halo.write(h as usize, 0.0) };
        h += threads;
    }
    if MATRIX == source::SHARED {
        let base = unsafe { matrix.read(lo as usize) };
        let mut l = me;
        while l <= hi - lo {
            unsafe { offsets.write(l as usize, matrix.read((lo + l) as usize)) };
            l += threads;
        }
        let mut j = unsafe { matrix.read(lo as usize) } + me;
        let end = unsafe { matrix.read(hi as usize) };
        while j < end {
            unsafe {
                columns.write((j - base) as usize, matrix.read((rows + 1 + j) as usize));
                values.write((j - base) as usize, vals.read(j as usize));
            }
            j += threads;
        }
    }
    unsafe { block.sync_aligned() };

    let (mut gamma_before, mut k, mut par) = (0.0f64, 0u32, 0u32);
    let (mut true_before, mut gamma_at_check, mut restarts, mut checks) = (f64::INFINITY, f64::INFINITY, 0u32, 0u32);
    let mut restart = false;
    let mut true_part = 0.0f64;
    let mut last_true = -1.0f64;
    let mut gamma;
    let near = |i: u32, depth: u32| i - lo < depth || hi - i <= depth;
    // Position h of the halo's outer band (2 band positions: band below lo
    // from 2 band away, band from hi + band): its row, if in the matrix.
    let outer = |h: u32| -> Option<u32> {
        let c = if h < band { (lo + h).wrapping_sub(2 * band) } else { hi + h };
        ((h >= band || lo + h >= 2 * band) && h < 2 * band && c < rows).then_some(c)
    };
    loop {
        let check = k % CHECK_EVERY == CHECK_EVERY - 1;
        // 1. w = A r, and the partials.
        let mut sums = [0.0f64; SUMS];
        sums[4] = true_part;
        let mut i = lo + me;
        while i < hi {
            let l = (i - lo) as usize;
            unsafe {
                let w = sl.row::<MATRIX>(matrix, vals, i, |c| sl.at(r, r_halo, band, c));
                let (ri, si, pi) = (r.read(l), s.read(l), p.read(l));
                sums[0] += (ri * ri) as f64;
                sums[1] += (w * ri) as f64;
                sums[2] += (ri * si) as f64;
                sums[3] += (pi * si) as f64;
                if MISTAKE != mistake::HALO_AFTER_SYNC && near(i, 2 * band) {
                    exchange.write(slot(par, 0) + i as usize, ri);
                }
                if check && near(i, band) {
                    exchange.write(slot(par, 1) + i as usize, x.read(l));
                }
            }
            i += threads;
        }
        // r at the halo's outer band (rows band + 1 to 2 band away, which
        // this block does not keep), its first STASH positions per thread.
        let mut stash = [0.0f32; STASH];
        let mut load_stash = || {
            let mut j = 0;
            while j < STASH {
                let h = me + j as u32 * threads;
                if let Some(c) = outer(h) {
                    stash[j] = unsafe { exchange.read(slot(par, 0) + c as usize) };
                }
                j += 1;
            }
        };
        if MISTAKE == mistake::NO_SYNC {
            load_stash(); // before the barrier that publishes it: a race
        }
        // 2 and 3. The totals, the same in every block: the grid's reduce of
        // the five sums, whose grid barrier also publishes the halo.
        let [g, wr, rs, ps, true_squared] = grid.reduce_array(sums, Plus);
        if MISTAKE == mistake::HALO_AFTER_SYNC {
            let mut i = lo + me;
            while i < hi {
                if near(i, 2 * band) {
                    unsafe { exchange.write(slot(par, 0) + i as usize, r.read((i - lo) as usize)) };
                }
                i += threads;
            }
        }
        if MISTAKE != mistake::NO_SYNC {
            load_stash();
        }
        gamma = g;
        true_part = 0.0;
        if k > 0 && (k - 1) % CHECK_EVERY == CHECK_EVERY - 1 {
            // The check of the iteration before: ‖b − A x‖ of its x, beside
            // its gamma. The true residual grows where the recurrence
            // drifted from it: more than twice the last check's while the
            // recurrence's fell. Then restart (beta = 0: p = r, s = A r).
            checks += 1;
            last_true = true_squared;
            if !true_squared.is_finite() {
                if grid.thread_rank() == 0 {
                    unsafe { state.write(BREAKDOWN, k as f64) };
                }
                break;
            }
            if true_squared > 4.0 * true_before && gamma_before < gamma_at_check {
                restart = true;
                restarts += 1;
            }
            true_before = true_squared;
            gamma_at_check = gamma_before;
        }
        if !(gamma > tolerance_squared && k < max_iterations) {
            break;
        }
        let beta = if k == 0 || restart { 0.0 } else { gamma / gamma_before };
        restart = false;
        let p_ap = wr + 2.0 * beta * rs + beta * beta * ps;
        // A must be positive definite and the sums sound: where p·A p is not
        // positive, stop and say so (every thread has the same values).
        if p_ap.is_nan() || p_ap <= 0.0 {
            if grid.thread_rank() == 0 {
                unsafe { state.write(BREAKDOWN, (k + 1) as f64) };
            }
            break;
        }
        let alpha = gamma / p_ap;
        let (beta32, alpha32) = (beta as f32, alpha as f32);
        // 4. p over the slice and 2 band rows each side: p' = r + beta p,
        // p from this block's own copy (the owner's bits), r from the halo
        // it keeps within band rows and from the exchange beyond.
        let outer_p = |h: u32, r_c: f32| {
            let at = (if h < band { h } else { h + 2 * band }) as usize;
            // SAFETY: a position of the halo's 4 band.
            unsafe { p_halo.write(at, next_p(r_c, p_halo.read(at), beta32)) };
        };
        // The stashed positions (a loop of constant bound, unrolled: the
        // stash stays in registers), then the rest.
        let mut j = 0;
        while j < STASH {
            let h = me + j as u32 * threads;
            if outer(h).is_some() {
                outer_p(h, stash[j]);
            }
            j += 1;
        }
        let mut h = me + STASH as u32 * threads;
        while h < 2 * band {
            if let Some(c) = outer(h) {
                outer_p(h, unsafe { exchange.read(slot(par, 0) + c as usize) });
            }
            h += threads;
        }
        let mut h = me;
        while h < 2 * band {
            // p_halo positions band .. 3 band: rows within band, whose r is r_halo[h].
            let c = if h < band { (lo + h).wrapping_sub(band) } else { hi + h - band };
            if (h >= band || lo + h >= band) && c < rows {
                unsafe { p_halo.write((h + band) as usize, next_p(r_halo.read(h as usize), p_halo.read((h + band) as usize), beta32)) };
            }
            h += threads;
        }
        // The slice's p, and on a check, b − A x before x moves.
        let mut i = lo + me;
        while i < hi {
            let l = (i - lo) as usize;
            unsafe {
                p.write(l, next_p(r.read(l), p.read(l), beta32));
                if check {
                    let ax =
                        sl.row::<MATRIX>(
                            matrix,
                            vals,
                            i,
                            |c| {
                                if c >= lo && c < hi { x.read((c - lo) as usize) } else { exchange.read(slot(par, 1) + c as usize) }
                            },
                        );
                    let t = (vectors.read(n + i as usize) - ax) as f64;
                    true_part += t * t;
                }
            }
            i += threads;
        }
        unsafe { block.sync_aligned() };
        // s = A p over the slice; x and r.
        let mut i = lo + me;
        while i < hi {
            let l = (i - lo) as usize;
            unsafe {
                let si = sl.row::<MATRIX>(matrix, vals, i, |c| sl.at(p, p_halo, 2 * band, c));
                s.write(l, si);
                x.write(l, x.read(l) + alpha32 * p.read(l));
                r.write(l, next_r(r.read(l), si, alpha32));
            }
            i += threads;
        }
        // r at band rows each side, as their owners compute it.
        let mut h = me;
        while h < 2 * band {
            let c = if h < band { (lo + h).wrapping_sub(band) } else { hi + h - band };
            if (h >= band || lo + h >= band) && c < rows {
                unsafe {
                    let sc = sl.row::<MATRIX>(matrix, vals, c, |cc| sl.at(p, p_halo, 2 * band, cc));
                    r_halo.write(h as usize, next_r(r_halo.read(h as usize), sc, alpha32));
                }
            }
            h += threads;
        }
        unsafe { block.sync_aligned() };
        gamma_before = gamma;
        k += 1;
        par ^= 1;
    }
    let mut i = lo + me;
    while i < hi {
        unsafe { vectors.write(i as usize, x.read((i - lo) as usize)) };
        i += threads;
    }
    if grid.thread_rank() == 0 {
        unsafe {
            write_result(state, gamma, gamma_before, k);
            state.write(RESTARTS, restarts as f64);
            state.write(TRUE_RESIDUAL, last_true);
            state.write(CHECKS, checks as f64);
        }
    }
}

macro_rules! on_chip_kernel {
    ($(#[$doc:meta])* $name:ident, $($attr:ident),*; $matrix:expr, $mistake:expr) => {
        $(#[$doc])*
        ///
        /// # Safety
        /// `matrix`/`vals` a CSR matrix of `n` rows (offsets, then columns)
        /// whose columns lie within `band` of their row (for the stencil:
        /// `n = side²`, the matrix unread); `vectors` five vectors of `n`
        /// (x written at the end, b read from the second); `exchange`
        /// [`EXCHANGE_VECTORS`] vectors of `n`; `state` the scalars and
        /// `SUMS_AT` values; `slice` times the grid's blocks at least `n`;
        /// the kernel's dynamic shared memory (before the fixed end every
        /// cooperative kernel has) at least [`on_chip_bytes`]`(slice, band, nnz)`,
        /// where `nnz` (shared-memory source only, else 0) is at least the
        /// stored values of any block's rows. The kernel indexes in 32 bits:
        /// 6 `n` and `matrix`'s length are at most `u32::MAX`.
        #[kernel(cooperative, $($attr,)* launch_bounds(512, 1))]
        #[allow(clippy::too_many_arguments)]
        pub unsafe fn $name<const TILE: u32 = 32>(
            matrix: In<u32>,
            vals: In<f32>,
            vectors: Out<f32>,
            exchange: Out<f32>,
            state: Out<f64>,
            n: usize,
            slice: u32,
            band: u32,
            side: u32,
            nnz: u32,
        ) {
            let grid = this_grid();
            // SAFETY: the caller's contract.
            unsafe { solve_on_chip::<TILE, { $matrix }, { $mistake }>(&grid, matrix, vals, vectors, exchange, state, n, slice, band, side, nnz) }
        }
    };
}

on_chip_kernel!(
    /// The solve on chip, the matrix read from device memory (CSR) every iteration.
    conjugate_gradient_on_chip, ; source::GLOBAL, mistake::NONE
);
on_chip_kernel!(
    /// The solve on chip, each block's CSR rows copied into its shared memory too.
    conjugate_gradient_on_chip_matrix, ; source::SHARED, mistake::NONE
);
on_chip_kernel!(
    /// The solve on chip with no matrix at all: the 5-point Laplacian of a
    /// `side` x `side` grid, computed (matrix-free; NVIDIA's samples read CSR).
    conjugate_gradient_on_chip_stencil, ; source::STENCIL, mistake::NONE
);
on_chip_kernel!(
    /// [`conjugate_gradient_on_chip`] reading its halo before the grid
    /// barrier (its reduce's) that publishes it: a race the emulator names.
    /// Emulator only.
    mutant_conjugate_gradient_on_chip_no_sync, emulator; source::GLOBAL, mistake::NO_SYNC
);
on_chip_kernel!(
    /// [`conjugate_gradient_on_chip`] writing its halo after the grid
    /// reduce's barrier: a neighbour reads it first, a race the emulator names.
    /// Emulator only.
    mutant_conjugate_gradient_on_chip_halo_after_sync, emulator; source::GLOBAL, mistake::HALO_AFTER_SYNC
);
