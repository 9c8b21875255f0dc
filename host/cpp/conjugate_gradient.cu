// The persistent conjugate-gradient kernel in CUDA C++, the project's own
// translation of conjugate_gradient_persistent
// (gpu/src/kernels/conjugate_gradient.rs), line for line. `cg-lesson
// conjugate-gradient --bench` builds it with nvcc to a cubin and launches it through its own launch path on the same buffers as the Rust
// kernel. extern "C" keeps its name for that.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

namespace cg = cooperative_groups;

constexpr unsigned kTile = 32;

// The scalars at the start of `state`, as in Rust.
constexpr size_t R1 = 0;
constexpr size_t R0 = 1;
constexpr size_t ITERATIONS = 3;
constexpr size_t DONE = 4;
constexpr size_t TOLERANCE_SQUARED = 5;
constexpr size_t MAX_ITERATIONS = 6;
constexpr size_t PARTIALS = 8;

// The block's total of v, in every thread (block_total in Rust).
__device__ double blockTotal(cg::thread_block block, cg::thread_block_tile<kTile> tile, double v) {
    extern __shared__ double totals[];
    double t = cg::reduce(tile, v, cg::plus<double>());
    if (tile.thread_rank() == 0) {
        totals[tile.meta_group_rank()] = t;
    }
    // __syncthreads(), the aligned bar.sync, where Rust calls block.sync_aligned():
    // cg::thread_block::sync() is the non-aligned barrier.sync, as Rust's block.sync() is.
    __syncthreads();
    double total = 0.0;
    for (unsigned i = 0; i < tile.meta_group_size(); i++) {
        total += totals[i];
    }
    // The next call may overwrite the totals only after every thread has read them.
    __syncthreads();
    return total;
}

// Thread 0 writes the block's total of part to state[slot] (write_block_total).
__device__ void writeBlockTotal(cg::thread_block block, cg::thread_block_tile<kTile> tile, double part, double* state, size_t slot) {
    double total = blockTotal(block, tile, part);
    if (block.thread_rank() == 0) {
        state[slot] = total;
    }
}

// The sum of values[first .. first + count], in every thread, in the same order in every block (total_of).
__device__ double totalOf(cg::thread_block block, cg::thread_block_tile<kTile> tile, const double* values, size_t first, size_t count) {
    double mine = 0.0;
    for (size_t i = block.thread_rank(); i < count; i += block.num_threads()) {
        mine += values[first + i];
    }
    return blockTotal(block, tile, mine);
}

// Row i of A times p (row_times_p).
__device__ float rowTimesP(const unsigned* __restrict__ matrix, const float* __restrict__ vals, const float* vectors, size_t n, size_t i) {
    size_t start = matrix[i], end = matrix[i + 1];
    float s = 0.0f;
    for (size_t j = start; j < end; j++) {
        s += vals[j] * vectors[2 * n + matrix[n + 1 + j]];
    }
    return s;
}

// Ap = A p for rows first, first + stride, ..., and their part of p·Ap (spmv_and_dot).
__device__ double spmvAndDot(const unsigned* __restrict__ matrix, const float* __restrict__ vals, float* vectors, size_t n, size_t first, size_t stride) {
    double part = 0.0;
    for (size_t i = first; i < n; i += stride) {
        float ap = rowTimesP(matrix, vals, vectors, n, i);
        vectors[3 * n + i] = ap;
        part += (double)(vectors[2 * n + i] * ap);
    }
    return part;
}

// x[i] += alpha p[i]; r[i] -= alpha Ap[i]; returns r[i]² (update_x_and_r).
__device__ double updateXAndR(float* vectors, size_t n, size_t i, float alpha) {
    vectors[i] = vectors[i] + alpha * vectors[2 * n + i];
    float r = vectors[n + i] - alpha * vectors[3 * n + i];
    vectors[n + i] = r;
    return (double)(r * r);
}

// The Rust kernel's launch_bounds(max_threads, min_blocks), which the host
// passes as -DMAX_THREADS=... -DMIN_BLOCKS=...; none if it passes neither.
#if defined(MAX_THREADS) && defined(MIN_BLOCKS)
#define BOUNDS __launch_bounds__(MAX_THREADS, MIN_BLOCKS)
#else
#define BOUNDS
#endif

// The whole solve in one cooperative launch, three grid.sync() per iteration
// (conjugate_gradient_persistent and its body, solve).
extern "C" __global__ void BOUNDS conjugateGradientPersistent(const unsigned* __restrict__ matrix, const float* __restrict__ vals,
                                                              float* vectors, double* state, size_t n) {
    cg::grid_group grid = cg::this_grid();
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<kTile> tile = cg::tiled_partition<kTile>(block);
    const size_t blocks = grid.num_blocks();
    const size_t dots = PARTIALS, squares = PARTIALS + blocks;
    const double toleranceSquared = state[TOLERANCE_SQUARED];
    const unsigned maxIterations = (unsigned)state[MAX_ITERATIONS];
    double part = 0.0;
    for (size_t i = grid.thread_rank(); i < n; i += grid.num_threads()) {
        float r = vectors[n + i];
        part += (double)(r * r);
    }
    writeBlockTotal(block, tile, part, state, squares + grid.block_rank());
    grid.sync();
    double r1 = totalOf(block, tile, state, squares, blocks);
    double r0 = 0.0;
    unsigned k = 0;
    while (r1 > toleranceSquared && k < maxIterations) {
        float beta = k == 0 ? 0.0f : (float)(r1 / r0);
        k += 1;
        for (size_t i = grid.thread_rank(); i < n; i += grid.num_threads()) {
            vectors[2 * n + i] = vectors[n + i] + beta * vectors[2 * n + i];
        }
        grid.sync();  // (1) the SpMV reads p from every block
        part = spmvAndDot(matrix, vals, vectors, n, grid.thread_rank(), grid.num_threads());
        writeBlockTotal(block, tile, part, state, dots + grid.block_rank());
        grid.sync();  // (2) p·Ap from every block
        float alpha = (float)(r1 / totalOf(block, tile, state, dots, blocks));
        part = 0.0;
        for (size_t i = grid.thread_rank(); i < n; i += grid.num_threads()) {
            part += updateXAndR(vectors, n, i, alpha);
        }
        writeBlockTotal(block, tile, part, state, squares + grid.block_rank());
        grid.sync();  // (3) r·r from every block
        r0 = r1;
        r1 = totalOf(block, tile, state, squares, blocks);
    }
    if (grid.thread_rank() == 0) {
        state[R1] = r1;
        state[R0] = r0;
        state[ITERATIONS] = (double)k;
        state[DONE] = 1.0;
    }
}

// The block's totals of a and b, in every thread, one pair of barriers for
// both (block_total_pair in Rust); two doubles of shared memory per tile.
__device__ void blockTotalPair(cg::thread_block block, cg::thread_block_tile<kTile> tile, double a, double b, double* totalA, double* totalB) {
    extern __shared__ double totals[];
    double ta = cg::reduce(tile, a, cg::plus<double>());
    double tb = cg::reduce(tile, b, cg::plus<double>());
    const unsigned tiles = tile.meta_group_size();
    if (tile.thread_rank() == 0) {
        totals[tile.meta_group_rank()] = ta;
        totals[tiles + tile.meta_group_rank()] = tb;
    }
    __syncthreads();
    double sa = 0.0, sb = 0.0;
    for (unsigned i = 0; i < tiles; i++) {
        sa += totals[i];
        sb += totals[tiles + i];
    }
    __syncthreads();
    *totalA = sa;
    *totalB = sb;
}

// The sums of values[a .. a + count] and values[b .. b + count], in every thread (total_pair_of).
__device__ void totalPairOf(cg::thread_block block, cg::thread_block_tile<kTile> tile, const double* values, size_t a, size_t b, size_t count,
                            double* totalA, double* totalB) {
    double mineA = 0.0, mineB = 0.0;
    for (size_t i = block.thread_rank(); i < count; i += block.num_threads()) {
        mineA += values[a + i];
        mineB += values[b + i];
    }
    blockTotalPair(block, tile, mineA, mineB, totalA, totalB);
}

// One reduction per iteration, two grid.sync() (solve_fused in Rust;
// Chronopoulos and Gear 1989): w = A r, r·r and w·r together, then beta,
// alpha, p = r + beta p, s = w + beta s, x += alpha p, r -= alpha s.
__device__ __forceinline__ void solveFused(const unsigned* __restrict__ matrix, const float* __restrict__ vals, float* vectors, double* state, size_t n) {
    cg::grid_group grid = cg::this_grid();
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<kTile> tile = cg::tiled_partition<kTile>(block);
    const size_t blocks = grid.num_blocks();
    const size_t squares = PARTIALS, products = PARTIALS + blocks;
    const double toleranceSquared = state[TOLERANCE_SQUARED];
    const unsigned maxIterations = (unsigned)state[MAX_ITERATIONS];
    // 32-bit indices, as in Rust.
    const unsigned rows = (unsigned)n, first = (unsigned)grid.thread_rank(), stride = (unsigned)grid.num_threads();
    const unsigned x = 0, r = rows, p = 2 * rows, s = 3 * rows, w = 4 * rows;
    double gammaBefore = 0.0, alphaBefore = 0.0, gamma;
    unsigned k = 0;
    for (;;) {
        double rr = 0.0, wr = 0.0;
        for (unsigned row = first; row < rows; row += stride) {
            const unsigned start = matrix[row], end = matrix[row + 1];
            float ar = 0.0f;
            for (unsigned j = start; j < end; j++) {
                const unsigned column = matrix[rows + 1 + j];
                ar += vals[j] * vectors[r + column];
            }
            vectors[w + row] = ar;
            float ri = vectors[r + row];
            rr += (double)(ri * ri);
            wr += (double)(ar * ri);
        }
        blockTotalPair(block, tile, rr, wr, &rr, &wr);
        if (block.thread_rank() == 0) {
            state[squares + grid.block_rank()] = rr;
            state[products + grid.block_rank()] = wr;
        }
        grid.sync();  // (1) r·r and w·r from every block
        totalPairOf(block, tile, state, squares, products, blocks, &rr, &wr);
        gamma = rr;
        if (!(gamma > toleranceSquared && k < maxIterations)) {
            break;
        }
        double beta = 0.0, alpha;
        if (k == 0) {
            alpha = gamma / wr;
        } else {
            beta = gamma / gammaBefore;
            alpha = gamma / (wr - beta * gamma / alphaBefore);
        }
        k += 1;
        const float beta32 = (float)beta, alpha32 = (float)alpha;
        for (unsigned row = first; row < rows; row += stride) {
            // p and s start at 0 and beta at 0, so the first trip sets p = r, s = w.
            float pi = vectors[r + row] + beta32 * vectors[p + row];
            float si = vectors[w + row] + beta32 * vectors[s + row];
            vectors[p + row] = pi;
            vectors[s + row] = si;
            vectors[x + row] = vectors[x + row] + alpha32 * pi;
            vectors[r + row] = vectors[r + row] - alpha32 * si;
        }
        grid.sync();  // (2) the SpMV reads r from every block
        gammaBefore = gamma;
        alphaBefore = alpha;
    }
    if (grid.thread_rank() == 0) {
        state[R1] = gamma;
        state[R0] = gammaBefore;
        state[ITERATIONS] = (double)k;
        state[DONE] = 1.0;
    }
}

// conjugate_gradient_fused.
extern "C" __global__ void conjugateGradientFused(const unsigned* __restrict__ matrix, const float* __restrict__ vals, float* vectors, double* state,
                                                  size_t n) {
    solveFused(matrix, vals, vectors, state, n);
}

// conjugate_gradient_fused_resident: the Rust kernel's launch_bounds(256, 8).
extern "C" __global__ void __launch_bounds__(256, 8) conjugateGradientFusedResident(const unsigned* __restrict__ matrix, const float* __restrict__ vals,
                                                                                    float* vectors, double* state, size_t n) {
    solveFused(matrix, vals, vectors, state, n);
}
