//! A conjugate-gradient solve of A x = b (A symmetric, in CSR), as NVIDIA's
//! cuda-samples do it three ways: a launch per step, the same steps as a
//! CUDA graph, and one persistent cooperative kernel whose `grid.sync()`
//! separates the dependent steps (`conjugateGradientMultiBlockCG`).
//!
//! Vectors are `f32` and dot products are added in `f64`, as in the
//! samples. Buffers are packed so that no kernel takes more than eight
//! parameters:
//! - `matrix`: the row offsets (`n + 1`), then the column of every stored value;
//! - `vectors`: `x`, `r`, `p` and `A p`, `n` floats each, in that order, and
//!   for [`conjugate_gradient_fused`] a fifth, `A r`;
//! - `state` (`f64`): the scalars ([`R1`], [`R0`], [`ALPHA`],
//!   [`ITERATIONS`], [`DONE`], [`TOLERANCE_SQUARED`], [`MAX_ITERATIONS`]),
//!   then from [`PARTIALS`] one partial dot product per block (two per
//!   block for the persistent kernel).

use crate::cg::{self, Cooperative, GridGroup, Plus, ThreadBlock, ThreadBlockTile, this_grid, this_thread_block, tiled_partition};
use crate::kernel;
use crate::mem::{In, Out, dynamic_shared};

/// `state[R1]`: r·r now.
pub const R1: usize = 0;
/// `state[R0]`: r·r an iteration ago.
pub const R0: usize = 1;
/// `state[ALPHA]`: the step along p.
pub const ALPHA: usize = 2;
/// `state[ITERATIONS]`: iterations made.
pub const ITERATIONS: usize = 3;
/// `state[DONE]`: 1 once r·r is at most the tolerance squared or the iterations ran out.
pub const DONE: usize = 4;
/// `state[TOLERANCE_SQUARED]`: the tolerance on the residual's norm, squared.
pub const TOLERANCE_SQUARED: usize = 5;
/// `state[MAX_ITERATIONS]`: the iteration limit.
pub const MAX_ITERATIONS: usize = 6;
/// `state[BREAKDOWN]`: the fused kernels' iteration at which
/// Chronopoulos-Gear's denominator w·r − β r·r / α was not positive (the
/// recurrence broke down, and the solve stopped there); 0 if it never was.
pub const BREAKDOWN: usize = 7;
/// `state[PARTIALS..]`: one partial dot product per block.
pub const PARTIALS: usize = 8;

/// Bytes of dynamic shared memory [`block_total`] needs: one `f64` per tile.
pub const fn one_f64_per_tile(threads_per_block: u32, tile: u32) -> u32 {
    threads_per_block.div_ceil(tile) * 8
}

/// The block's total of `v`, in every thread.
///
/// # Safety
/// Every thread of the block calls it, outside any branch that splits a
/// warp (its block barriers are the aligned ones, C++'s `__syncthreads()`).
#[inline(always)]
unsafe fn block_total<const TILE: u32>(block: &ThreadBlock, tile: &ThreadBlockTile<TILE>, v: f64) -> f64 {
    let totals = dynamic_shared::<f64>();
    let t = cg::reduce(tile, v, Plus);
    if tile.thread_rank() == 0 {
        // SAFETY: one f64 per tile, each tile writing its own.
        unsafe { totals.write(tile.meta_group_rank() as usize, t) };
    }
    // SAFETY (both barriers): the caller's contract; the branch above has closed.
    unsafe { block.sync_aligned() };
    let mut total = 0.0f64;
    let mut i = 0;
    while i < tile.meta_group_size() {
        // SAFETY: i names a tile, whose total was written before the barrier.
        total += unsafe { totals.read(i as usize) };
        i += 1;
    }
    // The next call may overwrite the totals only after every thread has read them.
    unsafe { block.sync_aligned() };
    total
}

/// Thread 0 writes the block's total of `part` to `state[slot]`: the
/// block's partial of a dot product.
///
/// # Safety
/// As [`block_total`], and `slot` lies in `state`.
#[inline(always)]
unsafe fn write_block_total<const TILE: u32>(block: &ThreadBlock, tile: &ThreadBlockTile<TILE>, part: f64, state: Out<f64>, slot: usize) {
    // SAFETY: the caller's contract.
    let total = unsafe { block_total(block, tile, part) };
    if block.thread_rank() == 0 {
        // SAFETY: the caller's contract.
        unsafe { state.write(slot, total) };
    }
}

/// The sum of `values[first..first + count]`, in every thread of the block,
/// added in the same order by every block (so that every block decides the
/// same thing from it).
///
/// # Safety
/// As [`block_total`], and the range lies in `values`.
#[inline(always)]
unsafe fn total_of<const TILE: u32>(block: &ThreadBlock, tile: &ThreadBlockTile<TILE>, values: Out<f64>, first: usize, count: usize) -> f64 {
    let mut mine = 0.0f64;
    let mut i = block.thread_rank() as usize;
    while i < count {
        // SAFETY: the caller's contract.
        mine += unsafe { values.read(first + i) };
        i += block.size() as usize;
    }
    // SAFETY: the caller's contract; the loop above has closed.
    unsafe { block_total(block, tile, mine) }
}

/// Row `i` of A times p (the values and columns of `matrix` and `vals`).
///
/// # Safety
/// `matrix` and `vals` are a CSR matrix of `n` rows whose columns are below
/// `n`, and `i < n`; `vectors` holds four vectors of `n`.
#[inline(always)]
unsafe fn row_times_p(matrix: In<u32>, vals: In<f32>, vectors: Out<f32>, n: usize, i: usize) -> f32 {
    // SAFETY: the caller's contract, for each read below.
    unsafe {
        let (start, end) = (matrix.read(i) as usize, matrix.read(i + 1) as usize);
        let mut s = 0.0f32;
        for j in start..end {
            s += vals.read(j) * vectors.read(2 * n + matrix.read(n + 1 + j) as usize);
        }
        s
    }
}

/// Ap = A p for rows `first, first + stride, ...` below `n`, and those
/// rows' part of p·Ap, in f64.
///
/// # Safety
/// As [`row_times_p`], for every row named.
#[inline(always)]
unsafe fn spmv_and_dot(matrix: In<u32>, vals: In<f32>, vectors: Out<f32>, n: usize, first: usize, stride: usize) -> f64 {
    let mut part = 0.0f64;
    let mut i = first;
    while i < n {
        // SAFETY: i < n, the caller's contract.
        unsafe {
            let ap = row_times_p(matrix, vals, vectors, n, i);
            vectors.write(3 * n + i, ap);
            part += (vectors.read(2 * n + i) * ap) as f64;
        }
        i += stride;
    }
    part
}

/// Whether the solve has finished (`state[DONE]`), read by every thread.
///
/// # Safety
/// `state` holds the scalars (more than [`DONE`] elements), and no thread
/// writes `state[DONE]` in this launch before a barrier orders the two.
#[inline(always)]
unsafe fn done(state: Out<f64>) -> bool {
    // SAFETY: the caller's contract.
    unsafe { state.read(DONE) != 0.0 }
}

/// Step 1 of an iteration: p = r + beta p, beta = r1 / r0 (p = r at the first).
///
/// # Safety
/// `vectors` holds four vectors of `n`; `state` the scalars.
#[kernel]
pub unsafe fn conjugate_gradient_update_p(vectors: Out<f32>, state: Out<f64>, n: usize) {
    // SAFETY: the kernel's contract (`state` holds the scalars); DONE is
    // written only by thread 0 of `conjugate_gradient_next`, after the block
    // barriers of its `total_of`, which follow this read.
    if unsafe { done(state) } {
        return;
    }
    let grid = this_grid();
    // SAFETY: the scalars, then rows below n of each vector.
    unsafe {
        let beta = if state.read(ITERATIONS) == 0.0 { 0.0 } else { (state.read(R1) / state.read(R0)) as f32 };
        let mut i = grid.thread_rank();
        while i < n {
            vectors.write(2 * n + i, vectors.read(n + i) + beta * vectors.read(2 * n + i));
            i += grid.num_threads();
        }
    }
}

/// Step 2: A p, and each block's part of p·Ap in `state[PARTIALS + block]`.
///
/// # Safety
/// `matrix`/`vals` a CSR matrix of `n` rows; `vectors` four vectors of `n`;
/// `state` the scalars and one partial per block.
#[kernel(shared_memory = one_f64_per_tile)]
pub unsafe fn conjugate_gradient_spmv_dot<const TILE: u32 = 32>(matrix: In<u32>, vals: In<f32>, vectors: Out<f32>, state: Out<f64>, n: usize) {
    // SAFETY: the kernel's contract (`state` holds the scalars); DONE is
    // written only by thread 0 of `conjugate_gradient_next`, after the block
    // barriers of its `total_of`, which follow this read.
    if unsafe { done(state) } {
        return;
    }
    let (grid, block) = (this_grid(), this_thread_block());
    let tile = tiled_partition::<TILE>(&block);
    // SAFETY: the caller's contract.
    let part = unsafe { spmv_and_dot(matrix, vals, vectors, n, grid.thread_rank(), grid.num_threads()) };
    // SAFETY: one partial per block.
    unsafe { write_block_total(&block, &tile, part, state, PARTIALS + grid.block_rank()) };
}

/// Step 3 (one block): alpha = r1 / p·Ap from the blocks' partials.
///
/// # Safety
/// `state` holds the scalars and `blocks` partials.
#[kernel(shared_memory = one_f64_per_tile)]
pub unsafe fn conjugate_gradient_alpha<const TILE: u32 = 32>(state: Out<f64>, blocks: usize) {
    // SAFETY: the kernel's contract (`state` holds the scalars); DONE is
    // written only by thread 0 of `conjugate_gradient_next`, after the block
    // barriers of its `total_of`, which follow this read.
    if unsafe { done(state) } {
        return;
    }
    let block = this_thread_block();
    let tile = tiled_partition::<TILE>(&block);
    // SAFETY: every thread, outside any branch; `blocks` partials.
    let p_ap = unsafe { total_of(&block, &tile, state, PARTIALS, blocks) };
    if block.thread_rank() == 0 {
        // SAFETY: the scalars.
        unsafe { state.write(ALPHA, state.read(R1) / p_ap) };
    }
}

/// Step 4: x += alpha p, r -= alpha Ap, and each block's part of r·r.
///
/// # Safety
/// `vectors` four vectors of `n`; `state` the scalars and one partial per block.
#[kernel(shared_memory = one_f64_per_tile)]
pub unsafe fn conjugate_gradient_axpy<const TILE: u32 = 32>(vectors: Out<f32>, state: Out<f64>, n: usize) {
    // SAFETY: the kernel's contract (`state` holds the scalars); DONE is
    // written only by thread 0 of `conjugate_gradient_next`, after the block
    // barriers of its `total_of`, which follow this read.
    if unsafe { done(state) } {
        return;
    }
    let (grid, block) = (this_grid(), this_thread_block());
    let tile = tiled_partition::<TILE>(&block);
    // SAFETY: the scalars.
    let alpha = unsafe { state.read(ALPHA) } as f32;
    let mut part = 0.0f64;
    let mut i = grid.thread_rank();
    while i < n {
        // SAFETY: rows below n of each vector.
        unsafe { part += update_x_and_r(vectors, n, i, alpha) };
        i += grid.num_threads();
    }
    // SAFETY: one partial per block.
    unsafe { write_block_total(&block, &tile, part, state, PARTIALS + grid.block_rank()) };
}

/// x[i] += alpha p[i]; r[i] -= alpha Ap[i]; returns r[i]², in f64.
///
/// # Safety
/// `vectors` holds four vectors of `n`, and `i < n`.
#[inline(always)]
unsafe fn update_x_and_r(vectors: Out<f32>, n: usize, i: usize, alpha: f32) -> f64 {
    // SAFETY: the caller's contract.
    unsafe {
        vectors.write(i, vectors.read(i) + alpha * vectors.read(2 * n + i));
        let r = vectors.read(n + i) - alpha * vectors.read(3 * n + i);
        vectors.write(n + i, r);
        (r * r) as f64
    }
}

/// Step 5 (one block): r0 = r1, r1 = r·r from the partials, one iteration
/// more, and whether the solve is done.
///
/// # Safety
/// `state` holds the scalars and `blocks` partials.
#[kernel(shared_memory = one_f64_per_tile)]
pub unsafe fn conjugate_gradient_next<const TILE: u32 = 32>(state: Out<f64>, blocks: usize) {
    // SAFETY: the kernel's contract (`state` holds the scalars); DONE is
    // written only by thread 0 of `conjugate_gradient_next`, after the block
    // barriers of its `total_of`, which follow this read.
    if unsafe { done(state) } {
        return;
    }
    let block = this_thread_block();
    let tile = tiled_partition::<TILE>(&block);
    // SAFETY: every thread, outside any branch; `blocks` partials.
    let r1 = unsafe { total_of(&block, &tile, state, PARTIALS, blocks) };
    if block.thread_rank() == 0 {
        // SAFETY: the scalars.
        unsafe {
            let k = state.read(ITERATIONS) + 1.0;
            state.write(R0, state.read(R1));
            state.write(R1, r1);
            state.write(ITERATIONS, k);
            let finished = r1 <= state.read(TOLERANCE_SQUARED) || k >= state.read(MAX_ITERATIONS);
            state.write(DONE, if finished { 1.0 } else { 0.0 });
        }
    }
}

/// The answer of a persistent solve, written by thread 0 of the grid: r·r
/// now and an iteration ago, the iterations made, and the solve done.
///
/// # Safety
/// `state` holds the scalars; the caller is the grid's only writer of them now.
#[inline(always)]
pub(crate) unsafe fn write_result(state: Out<f64>, r1: f64, r0: f64, iterations: u32) {
    // SAFETY: the caller's contract.
    unsafe {
        state.write(R1, r1);
        state.write(R0, r0);
        state.write(ITERATIONS, iterations as f64);
        state.write(DONE, 1.0);
    }
}

/// The mistakes [`solve`] can be built with, for the tests.
pub mod mistake {
    /// None: the solver as it should be.
    pub const NONE: u32 = 0;
    /// No `grid.sync()` between the SpMV's partial dot products and their sum.
    pub const NO_SYNC_BEFORE_DOT: u32 = 1;
    /// The last `grid.sync()` of each iteration only in blocks other than block 0.
    pub const SYNC_IN_A_BRANCH: u32 = 2;
}

/// The whole solve in one launch: [`conjugate_gradient_persistent`]'s body,
/// with [`mistake`] `MISTAKE` made on purpose.
///
/// Three `grid.sync()` per iteration, each because a step reads what every
/// block wrote in the one before: (1) the SpMV reads other blocks' p; (2) the
/// sum of p·Ap reads every block's partial; (3) the sum of r·r reads every
/// block's partial. Every block adds the partials itself, in the same order,
/// so every block computes the same alpha and r·r, and all stop together.
///
/// # Safety
/// As [`conjugate_gradient_persistent`].
#[inline(always)]
unsafe fn solve<const TILE: u32, const MISTAKE: u32>(
    grid: &GridGroup<Cooperative>,
    matrix: In<u32>,
    vals: In<f32>,
    vectors: Out<f32>,
    state: Out<f64>,
    n: usize,
) {
    let block = this_thread_block();
    let tile = tiled_partition::<TILE>(&block);
    let blocks = grid.num_blocks();
    let (dots, squares) = (PARTIALS, PARTIALS + blocks);
    // SAFETY (every access below): rows below n of the four vectors, the
    // scalars, and two partials per block, the caller's contract. Every
    // thread of the block runs every reduction, outside any branch: the
    // loop's condition is the same in every thread of the grid.
    let (tolerance_squared, max_iterations) = unsafe { (state.read(TOLERANCE_SQUARED), state.read(MAX_ITERATIONS) as u32) };
    let mut part = 0.0f64;
    let mut i = grid.thread_rank();
    while i < n {
        let r = unsafe { vectors.read(n + i) };
        part += (r * r) as f64;
        i += grid.num_threads();
    }
    unsafe { write_block_total(&block, &tile, part, state, squares + grid.block_rank()) };
    grid.sync();
    let mut r1 = unsafe { total_of(&block, &tile, state, squares, blocks) };
    let mut r0 = 0.0f64;
    let mut k = 0u32;
    while r1 > tolerance_squared && k < max_iterations {
        let beta = if k == 0 { 0.0 } else { (r1 / r0) as f32 };
        k += 1;
        let mut i = grid.thread_rank();
        while i < n {
            unsafe { vectors.write(2 * n + i, vectors.read(n + i) + beta * vectors.read(2 * n + i)) };
            i += grid.num_threads();
        }
        grid.sync(); // (1) the SpMV reads p from every block
        let part = unsafe { spmv_and_dot(matrix, vals, vectors, n, grid.thread_rank(), grid.num_threads()) };
        unsafe { write_block_total(&block, &tile, part, state, dots + grid.block_rank()) };
        if MISTAKE != mistake::NO_SYNC_BEFORE_DOT {
            grid.sync(); // (2) p·Ap from every block
        }
        let alpha = (r1 / unsafe { total_of(&block, &tile, state, dots, blocks) }) as f32;
        let mut part = 0.0f64;
        let mut i = grid.thread_rank();
        while i < n {
            part += unsafe { update_x_and_r(vectors, n, i, alpha) };
            i += grid.num_threads();
        }
        unsafe { write_block_total(&block, &tile, part, state, squares + grid.block_rank()) };
        if MISTAKE != mistake::SYNC_IN_A_BRANCH || grid.block_rank() != 0 {
            grid.sync(); // (3) r·r from every block
        }
        r0 = r1;
        r1 = unsafe { total_of(&block, &tile, state, squares, blocks) };
    }
    if grid.thread_rank() == 0 {
        unsafe { write_result(state, r1, r0, k) };
    }
}

/// The whole solve in one cooperative launch (`conjugateGradientMultiBlockCG`):
/// from x = 0, r = b (in `vectors`), iterates until r·r is at most
/// `state[TOLERANCE_SQUARED]` or `state[MAX_ITERATIONS]` iterations, and
/// writes r·r and the iterations made to `state`.
///
/// # Safety
/// `matrix`/`vals` a CSR matrix of `n` rows with columns below `n`;
/// `vectors` four vectors of `n`; `state` the scalars and two partials per block.
#[kernel(cooperative, shared_memory = one_f64_per_tile)]
pub unsafe fn conjugate_gradient_persistent<const TILE: u32 = 32>(matrix: In<u32>, vals: In<f32>, vectors: Out<f32>, state: Out<f64>, n: usize) {
    let grid = this_grid();
    // SAFETY: the caller's contract.
    unsafe { solve::<TILE, { mistake::NONE }>(&grid, matrix, vals, vectors, state, n) }
}

/// [`conjugate_gradient_persistent`] without the `grid.sync()` between the
/// SpMV's partial dot products and their sum: a race the emulator names.
/// Emulator only: on a GPU the race gives a plausible wrong alpha, not a name.
///
/// # Safety
/// As [`conjugate_gradient_persistent`].
#[kernel(cooperative, emulator, shared_memory = one_f64_per_tile)]
pub unsafe fn mutant_conjugate_gradient_no_sync_before_dot<const TILE: u32 = 32>(matrix: In<u32>, vals: In<f32>, vectors: Out<f32>, state: Out<f64>, n: usize) {
    let grid = this_grid();
    // SAFETY: the caller's contract.
    unsafe { solve::<TILE, { mistake::NO_SYNC_BEFORE_DOT }>(&grid, matrix, vals, vectors, state, n) }
}

/// [`conjugate_gradient_persistent`] whose last `grid.sync()` of an
/// iteration block 0 skips: a deadlock the emulator names. Emulator only:
/// on a GPU it would hang.
///
/// # Safety
/// As [`conjugate_gradient_persistent`].
#[kernel(cooperative, emulator, shared_memory = one_f64_per_tile)]
pub unsafe fn mutant_conjugate_gradient_sync_in_a_branch<const TILE: u32 = 32>(matrix: In<u32>, vals: In<f32>, vectors: Out<f32>, state: Out<f64>, n: usize) {
    let grid = this_grid();
    // SAFETY: the caller's contract.
    unsafe { solve::<TILE, { mistake::SYNC_IN_A_BRANCH }>(&grid, matrix, vals, vectors, state, n) }
}

/// The block's totals of `a` and `b`, in every thread: [`block_total`] for
/// two values, with one pair of block barriers for both.
///
/// # Safety
/// As [`block_total`]; the shared memory holds two `f64` per tile.
#[inline(always)]
unsafe fn block_total_pair<const TILE: u32>(block: &ThreadBlock, tile: &ThreadBlockTile<TILE>, a: f64, b: f64) -> (f64, f64) {
    let totals = dynamic_shared::<f64>();
    let (ta, tb) = (cg::reduce(tile, a, Plus), cg::reduce(tile, b, Plus));
    let tiles = tile.meta_group_size() as usize;
    if tile.thread_rank() == 0 {
        // SAFETY: two f64 per tile, each tile writing its own pair.
        unsafe {
            totals.write(tile.meta_group_rank() as usize, ta);
            totals.write(tiles + tile.meta_group_rank() as usize, tb);
        }
    }
    // SAFETY (both barriers): the caller's contract; the branch above has closed.
    unsafe { block.sync_aligned() };
    let (mut total_a, mut total_b) = (0.0f64, 0.0f64);
    let mut i = 0;
    while i < tiles {
        // SAFETY: i names a tile, whose totals were written before the barrier.
        unsafe {
            total_a += totals.read(i);
            total_b += totals.read(tiles + i);
        }
        i += 1;
    }
    unsafe { block.sync_aligned() };
    (total_a, total_b)
}

/// Bytes of dynamic shared memory [`block_total_pair`] needs: two `f64` per tile.
pub const fn two_f64_per_tile(threads_per_block: u32, tile: u32) -> u32 {
    threads_per_block.div_ceil(tile) * 16
}

/// The mistakes [`solve_fused`] can be built with, for the tests.
pub mod fused_mistake {
    /// None: the solver as it should be.
    pub const NONE: u32 = 0;
    /// No `grid.sync()` between the update of r and the SpMV that reads
    /// other blocks' r.
    pub const NO_SYNC_BEFORE_SPMV: u32 = 1;
}

/// The whole solve in one launch with one reduction per iteration
/// (Chronopoulos and Gear, "s-step iterative methods for symmetric linear
/// systems", J. Comput. Appl. Math. 25, 1989): w = A r, then r·r and w·r
/// together, then from those alone
/// beta = r·r / (r·r before), alpha = r·r / (w·r − beta r·r / alpha before),
/// p = r + beta p, s = w + beta s (s is A p, kept without a second SpMV),
/// x += alpha p, r −= alpha s. The same iterates as [`solve`] in exact
/// arithmetic.
///
/// Two `grid.sync()` per iteration: (1) after every block wrote its two
/// partials, since alpha and beta need all of them; (2) after the update
/// of r, since the next SpMV reads r at rows other blocks own.
///
/// # Safety
/// As [`conjugate_gradient_fused`].
#[inline(always)]
unsafe fn solve_fused<const TILE: u32, const MISTAKE: u32>(
    grid: &GridGroup<Cooperative>,
    matrix: In<u32>,
    vals: In<f32>,
    vectors: Out<f32>,
    state: Out<f64>,
    n: usize,
) {
    let block = this_thread_block();
    let tile = tiled_partition::<TILE>(&block);
    let blocks = grid.num_blocks();
    let (squares, products) = (PARTIALS, PARTIALS + blocks);
    // 32-bit indices (the host allows N up to 2^24, so five vectors stay
    // below 2^27 elements; a grid has fewer than 2^32 threads): ptxas needs
    // fewer registers for them than for usize ones (56 to 40, sm_90).
    let (rows, first, stride) = (n as u32, grid.thread_rank() as u32, grid.num_threads() as u32);
    let (x, r, p, s, w) = (0, rows, 2 * rows, 3 * rows, 4 * rows);
    let at = |vector: u32, row: u32| (vector + row) as usize;
    // SAFETY (every access below): rows below n of the five vectors, the
    // scalars, and two partials per block, the caller's contract. Every
    // thread of the block runs every reduction, outside any branch: the
    // loop's condition is the same in every thread of the grid.
    let (tolerance_squared, max_iterations) = unsafe { (state.read(TOLERANCE_SQUARED), state.read(MAX_ITERATIONS) as u32) };
    let (mut gamma_before, mut alpha_before) = (0.0f64, 0.0f64);
    let mut k = 0u32;
    let mut gamma;
    loop {
        // w = A r on this thread's rows, and their parts of r·r and w·r.
        let (mut rr, mut wr) = (0.0f64, 0.0f64);
        let mut row = first;
        while row < rows {
            unsafe {
                let (start, end) = (matrix.read(row as usize), matrix.read(row as usize + 1));
                let mut ar = 0.0f32;
                let mut j = start;
                while j < end {
                    let column = matrix.read((rows + 1 + j) as usize);
                    ar += vals.read(j as usize) * vectors.read(at(r, column));
                    j += 1;
                }
                vectors.write(at(w, row), ar);
                let ri = vectors.read(at(r, row));
                rr += (ri * ri) as f64;
                wr += (ar * ri) as f64;
            }
            row += stride;
        }
        let (rr, wr) = unsafe { block_total_pair(&block, &tile, rr, wr) };
        if block.thread_rank() == 0 {
            unsafe {
                state.write(squares + grid.block_rank(), rr);
                state.write(products + grid.block_rank(), wr);
            }
        }
        grid.sync(); // (1) r·r and w·r from every block
        let (rr, wr) = unsafe { total_pair_of(&block, &tile, state, squares, products, blocks) };
        gamma = rr;
        if !(gamma > tolerance_squared && k < max_iterations) {
            break;
        }
        let (beta, denominator) = if k == 0 {
            (0.0f64, wr)
        } else {
            let beta = gamma / gamma_before;
            (beta, wr - beta * gamma / alpha_before)
        };
        // A must be positive definite and the recurrence sound: where the
        // denominator (p·A p, as the recurrence has it) is not positive, stop
        // and say so (every thread has the same values, so every thread stops).
        if denominator.is_nan() || denominator <= 0.0 {
            if grid.thread_rank() == 0 {
                unsafe { state.write(BREAKDOWN, (k + 1) as f64) };
            }
            break;
        }
        let alpha = gamma / denominator;
        k += 1;
        let (beta32, alpha32) = (beta as f32, alpha as f32);
        let mut row = first;
        while row < rows {
            // p and s start at 0 and beta at 0, so the first trip sets p = r, s = w.
            unsafe {
                let pi = vectors.read(at(r, row)) + beta32 * vectors.read(at(p, row));
                let si = vectors.read(at(w, row)) + beta32 * vectors.read(at(s, row));
                vectors.write(at(p, row), pi);
                vectors.write(at(s, row), si);
                vectors.write(at(x, row), vectors.read(at(x, row)) + alpha32 * pi);
                vectors.write(at(r, row), vectors.read(at(r, row)) - alpha32 * si);
            }
            row += stride;
        }
        if MISTAKE != fused_mistake::NO_SYNC_BEFORE_SPMV {
            grid.sync(); // (2) the SpMV reads r from every block
        }
        (gamma_before, alpha_before) = (gamma, alpha);
    }
    if grid.thread_rank() == 0 {
        unsafe { write_result(state, gamma, gamma_before, k) };
    }
}

/// The sums of `values[a..a + count]` and `values[b..b + count]`, in every
/// thread of the block, added in the same order by every block.
///
/// # Safety
/// As [`block_total_pair`], and both ranges lie in `values`.
#[inline(always)]
unsafe fn total_pair_of<const TILE: u32>(block: &ThreadBlock, tile: &ThreadBlockTile<TILE>, values: Out<f64>, a: usize, b: usize, count: usize) -> (f64, f64) {
    let (mut mine_a, mut mine_b) = (0.0f64, 0.0f64);
    let mut i = block.thread_rank() as usize;
    while i < count {
        // SAFETY: the caller's contract.
        unsafe {
            mine_a += values.read(a + i);
            mine_b += values.read(b + i);
        }
        i += block.size() as usize;
    }
    // SAFETY: the caller's contract; the loop above has closed.
    unsafe { block_total_pair(block, tile, mine_a, mine_b) }
}

/// The whole solve in one cooperative launch, one reduction and two
/// `grid.sync()` per iteration ([`solve_fused`]): from x = 0, r = b,
/// p = s = 0 (in `vectors`; the first update relies on the zeros), as
/// [`conjugate_gradient_persistent`], and the same scalars written at the end.
///
/// # Safety
/// `matrix`/`vals` a CSR matrix of `n` rows with columns below `n`;
/// `vectors` five vectors of `n`; `state` the scalars and two partials per
/// block. The kernel indexes in 32 bits (its registers are the cost it
/// saves): `5 n` and `matrix`'s length (`n + 1` offsets and one column per
/// stored value) are at most `u32::MAX`.
#[kernel(cooperative, shared_memory = two_f64_per_tile)]
pub unsafe fn conjugate_gradient_fused<const TILE: u32 = 32>(matrix: In<u32>, vals: In<f32>, vectors: Out<f32>, state: Out<f64>, n: usize) {
    let grid = this_grid();
    // SAFETY: the caller's contract.
    unsafe { solve_fused::<TILE, { fused_mistake::NONE }>(&grid, matrix, vals, vectors, state, n) }
}

/// [`conjugate_gradient_fused`] held to 8 blocks of 256 per SM (C++'s
/// `__launch_bounds__(256, 8)`: at most 32 registers a thread), the step
/// kernels' residency, whatever ptxas must spill to get there.
///
/// # Safety
/// As [`conjugate_gradient_fused`].
#[kernel(cooperative, launch_bounds(256, 8), shared_memory = two_f64_per_tile)]
pub unsafe fn conjugate_gradient_fused_resident<const TILE: u32 = 32>(matrix: In<u32>, vals: In<f32>, vectors: Out<f32>, state: Out<f64>, n: usize) {
    let grid = this_grid();
    // SAFETY: the caller's contract.
    unsafe { solve_fused::<TILE, { fused_mistake::NONE }>(&grid, matrix, vals, vectors, state, n) }
}

/// [`conjugate_gradient_fused`] without the `grid.sync()` between the
/// update of r and the SpMV that reads it: a race the emulator names.
///
/// # Safety
/// As [`conjugate_gradient_fused`].
#[kernel(cooperative, emulator, shared_memory = two_f64_per_tile)]
pub unsafe fn mutant_conjugate_gradient_fused_no_sync_before_spmv<const TILE: u32 = 32>(
    matrix: In<u32>,
    vals: In<f32>,
    vectors: Out<f32>,
    state: Out<f64>,
    n: usize,
) {
    let grid = this_grid();
    // SAFETY: the caller's contract.
    unsafe { solve_fused::<TILE, { fused_mistake::NO_SYNC_BEFORE_SPMV }>(&grid, matrix, vals, vectors, state, n) }
}
