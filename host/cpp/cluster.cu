// The lesson's sum with a cluster stage between the block and the grid, in
// CUDA C++, line for line against gpu/src/kernels/cluster.rs (compute
// capability 9.0 and later). `cg-lesson bench` builds it with lesson.cu.
#include "lesson.cu"

// Bytes of dynamic shared memory: one float per tile for blockSum, then the
// block's total, which the cluster's rank 0 reads (one_f32_per_tile_and_the_block_total in Rust).
inline size_t oneFloatPerTileAndTheBlockTotal(unsigned threadsPerBlock) {
    return oneFloatPerTile(threadsPerBlock) + sizeof(float);
}

// Launched cooperatively, with a cluster dimension: each block's total goes to
// its shared memory; rank 0 of each cluster adds its cluster's totals, read
// from the other blocks' shared memory, into one partial per cluster; block 0
// adds the partials after grid.sync().
extern "C" __global__ void reduceClusterGrid(const float* __restrict__ in, float* __restrict__ partials,
                                             float* __restrict__ out, size_t n) {
    cg::grid_group grid = cg::this_grid();
    cg::cluster_group cluster = cg::this_cluster();
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<kTile> tile = cg::tiled_partition<kTile>(block);
    extern __shared__ float shared[];
    float* blockTotal = &shared[tile.meta_group_size()];

    const size_t step = grid.num_threads();
    float v = 0.0f;
    for (size_t i = grid.thread_rank(); i < n; i += step) {
        v += in[i];
    }
    float total = blockSum(block, tile, v);
    if (block.thread_rank() == 0) {
        *blockTotal = total;
    }

    // Every block's total, in its own shared memory, is visible to the cluster.
    cluster.sync();

    if (cluster.block_rank() == 0) {
        float w = 0.0f;
        for (unsigned r = block.thread_rank(); r < cluster.num_blocks(); r += block.num_threads()) {
            w += *cluster.map_shared_rank(blockTotal, r);
        }
        total = blockSum(block, tile, w);
        if (block.thread_rank() == 0) {
            partials[grid.cluster_rank()] = total;
        }
    }

    // No block leaves while rank 0 may still read its shared memory.
    cluster.sync();
    grid.sync();

    if (grid.block_rank() == 0) {
        const size_t m = grid.num_clusters();
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
