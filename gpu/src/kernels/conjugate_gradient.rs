//! A conjugate-gradient solve of A x = b (A symmetric, in CSR), as NVIDIA's
//! cuda-samples do it three ways: a launch per step, the same steps as a
//! CUDA graph, and one persistent cooperative kernel whose `grid.sync()`
//! separates the dependent steps (`conjugateGradientMultiBlockCG`).
//!
//! Vectors are `f32` and dot products are added in `f64`, as in the
//! samples. Buffers are packed so that no kernel takes more than eight
//! parameters:
//! - `matrix`: the row offsets (`n + 1`), then the column of every stored value;
//! - `vectors`: `x`, `r`, `p` and `A p`, `n` floats each, in that order;
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
#[inline(always)]
fn done(state: Out<f64>) -> bool {
    // SAFETY: every state buffer holds the scalars.
    unsafe { state.read(DONE) != 0.0 }
}

/// Step 1 of an iteration: p = r + beta p, beta = r1 / r0 (p = r at the first).
///
/// # Safety
/// `vectors` holds four vectors of `n`; `state` the scalars.
#[kernel]
pub unsafe fn conjugate_gradient_update_p(vectors: Out<f32>, state: Out<f64>, n: usize) {
    if done(state) {
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
    if done(state) {
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
    if done(state) {
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
    if done(state) {
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
    if done(state) {
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
        unsafe {
            state.write(R1, r1);
            state.write(R0, r0);
            state.write(ITERATIONS, k as f64);
            state.write(DONE, 1.0);
        }
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
