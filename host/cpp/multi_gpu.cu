// The sum across GPUs of `cg-lesson multi-gpu`, path (a), in CUDA C++: the
// project's own translation of gpu/src/kernels/multi.rs and
// gpu/src/cg/multi_grid.rs, for reading side by side and for timing the
// same kernel as nvcc builds it. One host thread launches one cooperative
// grid per GPU; they meet through flags in pinned, mapped host memory with
// system-scope acquire and release (no peer access).
//
//   nvcc -O3 -std=c++17 -arch=sm_90 host/cpp/multi_gpu.cu -o multi_gpu
//   ./multi_gpu N [GPUS]
//
// Prints each GPU's grid, the total against the double sum, and
// `RESULT multi-gpu-cpp N GPUS mean_us min_us max_us runs` (mean of 10 runs
// after 3 warm-ups; a run's time is its slowest GPU's, from CUDA events).
#include "lesson.cu"
#include <cuda/atomic>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                                          \
    do {                                                                                     \
        cudaError_t e = (call);                                                              \
        if (e != cudaSuccess) {                                                              \
            std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e)); \
            std::exit(1);                                                                    \
        }                                                                                    \
    } while (0)

// The barrier's words in host memory (cg::multi_grid in Rust): the report,
// who gave up, then one flag per GPU counting the barriers it reached.
constexpr unsigned kReport = 0, kReporter = 1, kFlags = 2, kReportMagic = 0x6d675aceu;
constexpr unsigned long long kTimeoutNs = 5000000000ull;

__device__ unsigned long long globalTimer() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

using SystemWord = cuda::atomic_ref<unsigned, cuda::thread_scope_system>;

// grid.sync(), then one thread of block 0 meets the other GPUs, then
// grid.sync() (MultiGridGroup::sync in Rust). `next` is the number of this
// barrier, which the caller keeps (it reads its own flag once).
__device__ void multiGridSync(cg::grid_group grid, unsigned* barrier, unsigned rank, unsigned gpus, unsigned next) {
    grid.sync();
    if (grid.block_rank() == 0 && cg::this_thread_block().thread_rank() == 0) {
        SystemWord(barrier[kFlags + rank]).store(next, cuda::memory_order_release);
        const unsigned long long start = globalTimer();
        for (unsigned other = 0; other < gpus; ++other) {
            if (other == rank) continue;
            while (SystemWord(barrier[kFlags + other]).load(cuda::memory_order_acquire) < next) {
                if (globalTimer() - start > kTimeoutNs) {
                    unsigned expected = 0;
                    if (SystemWord(barrier[kReport]).compare_exchange_strong(expected, kReportMagic)) {
                        SystemWord(barrier[kReporter]).store(rank, cuda::memory_order_release);
                    }
                    __trap();
                }
                __nanosleep(32);
            }
        }
    }
    grid.sync();
}

// reduce_multi_gpu in Rust.
extern "C" __global__ void reduceMultiGpu(const float* __restrict__ in, float* __restrict__ partials, float* totals, float* out,
                                          unsigned* barrier, unsigned rank, unsigned gpus, size_t n) {
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
    grid.sync();

    unsigned next = 0;
    if (blockIdx.x == 0) {
        const size_t m = grid.num_blocks();
        float w = 0.0f;
        for (size_t i = block.thread_rank(); i < m; i += block.num_threads()) {
            w += partials[i];
        }
        total = blockSum(block, tile, w);
        if (block.thread_rank() == 0) {
            next = SystemWord(barrier[kFlags + rank]).load(cuda::memory_order_acquire) + 1;
            totals[(next % 2) * gpus + rank] = total;
        }
    }

    multiGridSync(grid, barrier, rank, gpus, next);

    if (rank == 0 && blockIdx.x == 0 && block.thread_rank() == 0) {
        float sum = total;
        for (unsigned r = 1; r < gpus; ++r) {
            sum += totals[(next % 2) * gpus + r];
        }
        out[0] = sum;
    }
}

int main(int argc, char** argv) {
    const size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 4194915;
    int count = 0;
    CHECK(cudaGetDeviceCount(&count));
    const unsigned gpus = argc > 2 ? std::atoi(argv[2]) : count;
    if (gpus < 1 || (int)gpus > count) {
        std::fprintf(stderr, "asked for %u GPUs, %d here\n", gpus, count);
        return 1;
    }
    const unsigned threads = 256;
    const size_t shared = oneFloatPerTile(threads);

    unsigned* barrier;
    float* totals;
    CHECK(cudaHostAlloc(&barrier, (kFlags + gpus) * sizeof(unsigned), cudaHostAllocMapped | cudaHostAllocPortable));
    CHECK(cudaHostAlloc(&totals, 2 * gpus * sizeof(float), cudaHostAllocMapped | cudaHostAllocPortable));
    std::fill(barrier, barrier + kFlags + gpus, 0u);

    struct Gpu {
        float *in, *partials, *out;
        size_t first, len;
        unsigned blocks;
        cudaStream_t stream;
        std::vector<cudaEvent_t> start, end;
    };
    const int warmups = 3, runs = 10;
    std::vector<Gpu> g(gpus);
    double want = 0.0;
    for (unsigned r = 0; r < gpus; ++r) {
        CHECK(cudaSetDevice(r));
        g[r].first = n * r / gpus;
        g[r].len = n * (r + 1) / gpus - g[r].first;
        int perSm = 0, sms = 0;
        CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, reduceMultiGpu, threads, shared));
        CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, r));
        const size_t wanted = (g[r].len + threads - 1) / threads;
        g[r].blocks = (unsigned)std::max<size_t>(1, std::min<size_t>(wanted, (size_t)perSm * sms));
        std::printf("GPU %u: %d blocks/SM x %d SMs = %d; runs %u blocks on elements %zu .. %zu\n", r, perSm, sms, perSm * sms, g[r].blocks,
                    g[r].first, g[r].first + g[r].len);
        std::vector<float> xs(g[r].len);
        for (size_t i = 0; i < g[r].len; ++i) {
            const unsigned long long k = g[r].first + i;
            xs[i] = 0.5f + (float)((k * 2654435761ull) % 1024) / 1024.0f;
            want += xs[i];
        }
        CHECK(cudaMalloc(&g[r].in, std::max<size_t>(1, g[r].len) * sizeof(float)));
        CHECK(cudaMemcpy(g[r].in, xs.data(), g[r].len * sizeof(float), cudaMemcpyHostToDevice));
        CHECK(cudaMalloc(&g[r].partials, g[r].blocks * sizeof(float)));
        CHECK(cudaMalloc(&g[r].out, (warmups + runs) * sizeof(float)));
        CHECK(cudaStreamCreateWithFlags(&g[r].stream, cudaStreamNonBlocking));
        g[r].start.resize(runs);
        g[r].end.resize(runs);
        for (int k = 0; k < runs; ++k) {
            CHECK(cudaEventCreate(&g[r].start[k]));
            CHECK(cudaEventCreate(&g[r].end[k]));
        }
    }
    // Every run: one cooperative launch per GPU, launched back to back from this thread.
    for (int k = 0; k < warmups + runs; ++k) {
        for (unsigned r = 0; r < gpus; ++r) {
            CHECK(cudaSetDevice(r));
            const int t = k - warmups;
            if (t >= 0) CHECK(cudaEventRecord(g[r].start[t], g[r].stream));
            float* out = g[r].out + k;
            void* args[] = {&g[r].in, &g[r].partials, &totals, &out, &barrier, &r, (void*)&gpus, &g[r].len};
            CHECK(cudaLaunchCooperativeKernel((void*)reduceMultiGpu, g[r].blocks, threads, args, shared, g[r].stream));
            if (t >= 0) CHECK(cudaEventRecord(g[r].end[t], g[r].stream));
        }
    }
    std::vector<double> times(runs, 0.0);
    for (unsigned r = 0; r < gpus; ++r) {
        CHECK(cudaSetDevice(r));
        CHECK(cudaStreamSynchronize(g[r].stream));
        for (int k = 0; k < runs; ++k) {
            float ms = 0;
            CHECK(cudaEventElapsedTime(&ms, g[r].start[k], g[r].end[k]));
            times[k] = std::max(times[k], (double)ms * 1e3);
        }
    }
    CHECK(cudaSetDevice(0));
    std::vector<float> outs(warmups + runs);
    CHECK(cudaMemcpy(outs.data(), g[0].out, outs.size() * sizeof(float), cudaMemcpyDeviceToHost));
    float worst = 0;
    for (float o : outs) worst = std::max(worst, std::fabs(o - (float)want));
    double mean = 0;
    for (double t : times) mean += t / runs;
    std::printf("total %.6f vs %.6f (double), largest error of %d runs %.3g\n", outs.back(), want, warmups + runs, worst);
    std::printf("RESULT multi-gpu-cpp %zu %u %.2f %.2f %.2f %d\n", n, gpus, mean, *std::min_element(times.begin(), times.end()),
                *std::max_element(times.begin(), times.end()), runs);
    return 0;
}
