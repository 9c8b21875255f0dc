// The lesson's kernels in CUDA C++, the project's own translation of them,
// line for line against gpu/src/lesson/lesson.rs. `cg-lesson bench` builds them
// with nvcc, times them, and also launches them from a cubin through its own
// launch path. extern "C" keeps their names for that.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

namespace cg = cooperative_groups;

// The tile size, the same one constant as in Rust.
constexpr unsigned kTile = 32;

// One float per tile of dynamic shared memory (one_f32_per_tile in Rust).
inline size_t oneFloatPerTile(unsigned threadsPerBlock) {
    return (threadsPerBlock + kTile - 1) / kTile * sizeof(float);
}

// The block's total of v, in thread 0 (block_sum in Rust).
__device__ float blockSum(cg::thread_block block, cg::thread_block_tile<kTile> tile, float v) {
    extern __shared__ float tileTotals[];
    float tileTotal = cg::reduce(tile, v, cg::plus<float>());
    if (tile.thread_rank() == 0) {
        tileTotals[tile.meta_group_rank()] = tileTotal;
    }
    block.sync();
    float total = 0.0f;
    if (tile.meta_group_rank() == 0) {
        float mine = 0.0f;
        for (unsigned i = tile.thread_rank(); i < tile.meta_group_size(); i += kTile) {
            mine += tileTotals[i];
        }
        total = cg::reduce(tile, mine, cg::plus<float>());
    }
    block.sync();
    return total;
}

// Day 25, first launch.
extern "C" __global__ void reduceBlocksToPartials(const float* __restrict__ in, float* __restrict__ partials, size_t n) {
    cg::grid_group grid = cg::this_grid();
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<kTile> tile = cg::tiled_partition<kTile>(block);

    const size_t step = grid.num_threads();
    float v = 0.0f;
    for (size_t i = grid.thread_rank(); i < n; i += step) {
        v += in[i];
    }
    float total = blockSum(block, tile, v);
    if (block.thread_rank() == 0) {
        partials[blockIdx.x] = total;
    }
}

// Day 25, second launch: one block.
extern "C" __global__ void reducePartialsToTotal(const float* __restrict__ partials, float* __restrict__ out, size_t m) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<kTile> tile = cg::tiled_partition<kTile>(block);

    float w = 0.0f;
    for (size_t i = block.thread_rank(); i < m; i += block.num_threads()) {
        w += partials[i];
    }
    float total = blockSum(block, tile, w);
    if (block.thread_rank() == 0) {
        out[0] = total;
    }
}

extern "C" __global__ void reduceCooperativeGrid(const float* __restrict__ in, float* __restrict__ partials,
                                                 float* __restrict__ out, size_t n) {
    cg::grid_group grid = cg::this_grid();
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<kTile> tile = cg::tiled_partition<kTile>(block);

    const size_t step = grid.num_threads();
    float v = 0.0f;
    for (size_t i = grid.thread_rank(); i < n; i += step) {
        v += in[i];
    }
    float total = blockSum(block, tile, v);
    if (block.thread_rank() == 0) {
        partials[blockIdx.x] = total;
    }

    // Every write above is visible to every thread below.
    grid.sync();

    if (blockIdx.x == 0) {
        const size_t m = grid.num_blocks();
        float w = 0.0f;
        for (size_t i = block.thread_rank(); i < m; i += block.num_threads()) {
            w += partials[i];
        }
        total = blockSum(block, tile, w);
        if (block.thread_rank() == 0) {
            out[0] = total;
        }
    }
}

// The lesson's probeCooperative: what this_grid() reports, with no barrier,
// so any launch of it at any size is safe (probe_cooperative in Rust).
extern "C" __global__ void probeCooperative(unsigned* out) {
    cg::grid_group grid = cg::this_grid();
    cg::thread_block block = cg::this_thread_block();
    if (grid.block_rank() == 0 && block.thread_rank() == 0) {
        out[0] = grid.is_valid();
        out[1] = grid.num_blocks();
    }
}

// Threads coalescedDemo is launched with: two warps (COALESCED_DEMO_THREADS in Rust).
constexpr unsigned kCoalescedDemoThreads = 64;

// What cg::coalesced_threads() returns inside a branch taken by lanes 2, 4
// and 8 of warp 0 and lanes 0 to 15 of warp 1 (coalesced_demo in Rust).
extern "C" __global__ void coalescedDemo(unsigned* out) {
    cg::thread_block block = cg::this_thread_block();
    const unsigned warp = block.thread_rank() / 32;
    const unsigned lane = block.thread_rank() % 32;
    const bool takesBranch = (warp == 0 && (lane == 2 || lane == 4 || lane == 8)) || (warp == 1 && lane < 16);
    if (takesBranch) {
        cg::coalesced_group active = cg::coalesced_threads();
        const unsigned record[4] = {warp, lane, active.num_threads(), active.thread_rank()};
        for (unsigned k = 0; k < 4; ++k) {
            out[4 * block.thread_rank() + k] = record[k];
        }
    }
}
