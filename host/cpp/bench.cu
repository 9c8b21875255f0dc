// The lesson's two sums in CUDA C++, and CUB's DeviceReduce::Sum, timed the
// way `host bench` times the Rust kernels, on the same input, so the two
// languages are compared on one GPU in one run. Built and run by `host bench`
// where nvcc is on PATH.
//
// The three kernels are extern "C" so that `host bench` can also load them
// from a cubin of this file and launch them through its own launch path.
//
// Usage: bench_cpp RUNS WARMUPS THREADS N:ROTATE [N:ROTATE ...]
// Prints one line per measurement:
//   RESULT <variant> <n> <rotate> <median_ms> <min_ms> <max_ms> <mean_ms> <runs> <blocks> <sum>
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cub/device/device_reduce.cuh>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace cg = cooperative_groups;

#define CHECK(call)                                                                        \
    do {                                                                                   \
        cudaError_t err_ = (call);                                                         \
        if (err_ != cudaSuccess) {                                                         \
            std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call,              \
                         cudaGetErrorName(err_));                                          \
            std::exit(1);                                                                  \
        }                                                                                  \
    } while (0)

// Warp totals in dynamic shared memory, then the first warp adds them; the
// result is in thread 0. The same arithmetic as gpu/src/kernels/sum.rs.
__device__ float blockTotal(cg::thread_block block, cg::thread_block_tile<32> tile, float v) {
    extern __shared__ float warpTotals[];
    float warpTotal = cg::reduce(tile, v, cg::plus<float>());
    if (tile.thread_rank() == 0) warpTotals[tile.meta_group_rank()] = warpTotal;
    block.sync();
    float total = 0.0f;
    if (tile.meta_group_rank() == 0) {
        float mine = tile.thread_rank() < tile.meta_group_size() ? warpTotals[tile.thread_rank()] : 0.0f;
        total = cg::reduce(tile, mine, cg::plus<float>());
    }
    block.sync();
    return total;
}

// First stage: each block's grid-stride share of the input, into partials[block].
__device__ void blockPartial(cg::grid_group grid, cg::thread_block block, cg::thread_block_tile<32> tile,
                             const float* __restrict__ in, float* partials, size_t n) {
    float v = 0.0f;
    for (size_t i = grid.thread_rank(); i < n; i += grid.num_threads()) v += in[i];
    float t = blockTotal(block, tile, v);
    if (block.thread_rank() == 0) partials[grid.block_rank()] = t;
}

// Second stage: one block adds the m partials into *total (sum_of_partials in Rust).
__device__ void partialsTotal(cg::thread_block block, cg::thread_block_tile<32> tile, const float* partials,
                              float* total, size_t m) {
    float w = 0.0f;
    for (size_t i = block.thread_rank(); i < m; i += block.num_threads()) w += partials[i];
    float t = blockTotal(block, tile, w);
    if (block.thread_rank() == 0) *total = t;
}

extern "C" __global__ void blocksToPartials(const float* __restrict__ in, float* __restrict__ partials, size_t n) {
    cg::thread_block block = cg::this_thread_block();
    blockPartial(cg::this_grid(), block, cg::tiled_partition<32>(block), in, partials, n);
}

extern "C" __global__ void partialsToTotal(const float* __restrict__ partials, float* __restrict__ total, size_t m) {
    cg::thread_block block = cg::this_thread_block();
    partialsTotal(block, cg::tiled_partition<32>(block), partials, total, m);
}

extern "C" __global__ void cooperativeSum(const float* __restrict__ in, float* partials, float* total, size_t n) {
    cg::grid_group grid = cg::this_grid();
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
    blockPartial(grid, block, tile, in, partials, n);
    grid.sync();
    if (grid.block_rank() == 0) partialsTotal(block, tile, partials, total, grid.num_blocks());
}

struct Stats { double median, min, max, mean; };

static Stats summarize(std::vector<double> ms) {
    std::sort(ms.begin(), ms.end());
    size_t k = ms.size();
    double median = k % 2 ? ms[k / 2] : (ms[k / 2 - 1] + ms[k / 2]) / 2;
    double sum = 0;
    for (double x : ms) sum += x;
    return {median, ms.front(), ms.back(), sum / k};
}

// Warm-ups, then one event pair around each run; `work(r)` runs on buffer r % rotate.
template <typename Work>
static Stats timeRuns(int runs, int warmups, Work work) {
    cudaEvent_t start, end;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&end));
    for (int r = 0; r < warmups; ++r) work(r);
    std::vector<double> ms;
    for (int r = 0; r < runs; ++r) {
        CHECK(cudaEventRecord(start));
        work(warmups + r);
        CHECK(cudaEventRecord(end));
        CHECK(cudaEventSynchronize(end));
        float t = 0;
        CHECK(cudaEventElapsedTime(&t, start, end));
        ms.push_back(t);
    }
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(end));
    return summarize(ms);
}

static float readTotal(const float* d) {
    float h = 0;
    CHECK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
    return h;
}

int main(int argc, char** argv) {
    if (argc < 5) {
        std::fprintf(stderr, "usage: %s RUNS WARMUPS THREADS N:ROTATE...\n", argv[0]);
        return 2;
    }
    const int runs = std::atoi(argv[1]), warmups = std::atoi(argv[2]), threads = std::atoi(argv[3]);
    const size_t smem = (threads / 32) * sizeof(float);
    int device = 0, sms = 0, perSm = 0;
    CHECK(cudaGetDevice(&device));
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, cooperativeSum, threads, smem));
    const size_t capacity = size_t(perSm) * sms;

    for (int a = 4; a < argc; ++a) {
        std::string arg = argv[a];
        size_t colon = arg.find(':');
        const size_t n = std::strtoull(arg.substr(0, colon).c_str(), nullptr, 10);
        const int rotate = std::max(1, std::atoi(arg.substr(colon + 1).c_str()));
        const size_t blocks = std::max<size_t>(1, std::min((n + threads - 1) / threads, capacity));

        std::vector<float> host(n);
        for (size_t i = 0; i < n; ++i) host[i] = 0.5f + float((i * 2654435761ull) % 1024) / 1024.0f;
        // The copies sit back to back in one allocation, as on the Rust side.
        float* all;
        CHECK(cudaMalloc(&all, std::max<size_t>(n * rotate, 1) * sizeof(float)));
        std::vector<float*> inputs(rotate);
        for (int r = 0; r < rotate; ++r) {
            inputs[r] = all + size_t(r) * n;
            CHECK(cudaMemcpy(inputs[r], host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
        }
        float *partials, *total;
        CHECK(cudaMalloc(&partials, blocks * sizeof(float)));
        CHECK(cudaMalloc(&total, sizeof(float)));
        size_t tempBytes = 0;
        CHECK(cub::DeviceReduce::Sum(nullptr, tempBytes, inputs[0], total, n));
        void* temp;
        CHECK(cudaMalloc(&temp, std::max<size_t>(tempBytes, 1)));

        auto report = [&](const char* variant, Stats s, size_t grid) {
            std::printf("RESULT %s %zu %d %.6f %.6f %.6f %.6f %d %zu %.6f\n", variant, n, rotate, s.median, s.min, s.max,
                        s.mean, runs, grid, readTotal(total));
            std::fflush(stdout);
        };

        report("cpp-two-launches", timeRuns(runs, warmups, [&](int r) {
            blocksToPartials<<<blocks, threads, smem>>>(inputs[r % rotate], partials, n);
            partialsToTotal<<<1, threads, smem>>>(partials, total, blocks);
            CHECK(cudaGetLastError());
        }), blocks);

        cudaLaunchAttribute coop[1] = {};
        coop[0].id = cudaLaunchAttributeCooperative;
        coop[0].val.cooperative = 1;
        cudaLaunchConfig_t config = {};
        config.gridDim = dim3(unsigned(blocks));
        config.blockDim = dim3(unsigned(threads));
        config.dynamicSmemBytes = smem;
        config.attrs = coop;
        config.numAttrs = 1;
        report("cpp-cooperative", timeRuns(runs, warmups, [&](int r) {
            CHECK(cudaLaunchKernelEx(&config, cooperativeSum, (const float*)inputs[r % rotate], partials, total, n));
        }), blocks);

        report("cub-device-reduce", timeRuns(runs, warmups, [&](int r) {
            CHECK(cub::DeviceReduce::Sum(temp, tempBytes, inputs[r % rotate], total, n));
        }), 0);

        CHECK(cudaFree(all));
        CHECK(cudaFree(partials));
        CHECK(cudaFree(total));
        CHECK(cudaFree(temp));
    }
    return 0;
}
