// The lesson's two sums (lesson.cu) and CUB's DeviceReduce::Sum, timed the
// way `host bench` times the Rust kernels, on the same input and rotation,
// so that the two languages are compared on one GPU in one run.
//
// Usage: bench_cpp RUNS WARMUPS THREADS N:ROTATE [N:ROTATE ...]
//        bench_cpp launch-cost LAUNCHES THREADS
// The second form times LAUNCHES back-to-back launches of an empty kernel on
// the host, each way the runtime offers, at 1 block and at the cooperative
// maximum, and prints
//   LAUNCH <call> <cooperative 0|1> <blocks> <launches> <submit_us> <total_us>
// Prints one line per measurement and timing method:
//   RESULT <variant> <method> <n> <rotate> <median_ms> <min_ms> <max_ms> <mean_ms> <runs> <blocks> <min_total> <max_total> <nan_totals>
// method: queued (every run between its own pair of events, runs queued back
// to back, one wait at the end) or waited (the host waits for each run).
// Every run, warm-ups included, writes its total to its own slot (poisoned
// with NaN first); `host bench` checks the smallest and largest against the
// double reference, and that none is NaN.
#include "lesson.cu"
#include <cub/device/device_reduce.cuh>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define CHECK(call)                                                                        \
    do {                                                                                   \
        cudaError_t err_ = (call);                                                         \
        if (err_ != cudaSuccess) {                                                         \
            std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call,              \
                         cudaGetErrorName(err_));                                          \
            std::exit(1);                                                                  \
        }                                                                                  \
    } while (0)

extern "C" __global__ void emptyKernel() {}

#include <chrono>

// Host time per launch: to the last call's return, and until the GPU has run them all.
template <typename Launch>
static void launchCost(const char* call, int cooperative, unsigned blocks, int launches, Launch launch) {
    for (int i = 0; i < 100; ++i) launch();
    CHECK(cudaDeviceSynchronize());
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < launches; ++i) launch();
    auto submitted = std::chrono::steady_clock::now();
    CHECK(cudaDeviceSynchronize());
    auto done = std::chrono::steady_clock::now();
    auto us = [&](auto d) { return std::chrono::duration<double, std::micro>(d).count() / launches; };
    std::printf("LAUNCH %s %d %u %d %.4f %.4f\n", call, cooperative, blocks, launches, us(submitted - start), us(done - start));
    std::fflush(stdout);
}

static int launchCosts(int launches, int threads) {
    int device = 0, sms = 0, perSm = 0;
    CHECK(cudaGetDevice(&device));
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, emptyKernel, threads, 0));
    for (unsigned blocks : {1u, unsigned(perSm * sms)}) {
        launchCost("cpp: <<<>>>", 0, blocks, launches, [&] { emptyKernel<<<blocks, threads>>>(); });
        cudaLaunchAttribute coop[1] = {};
        coop[0].id = cudaLaunchAttributeCooperative;
        coop[0].val.cooperative = 1;
        cudaLaunchConfig_t config = {};
        config.gridDim = dim3(blocks);
        config.blockDim = dim3(unsigned(threads));
        config.attrs = coop;
        config.numAttrs = 0;
        launchCost("cpp: cudaLaunchKernelEx", 0, blocks, launches, [&] { CHECK(cudaLaunchKernelEx(&config, emptyKernel)); });
        config.numAttrs = 1;
        launchCost("cpp: cudaLaunchKernelEx", 1, blocks, launches, [&] { CHECK(cudaLaunchKernelEx(&config, emptyKernel)); });
        launchCost("cpp: cudaLaunchCooperativeKernel", 1, blocks, launches,
                   [&] { CHECK(cudaLaunchCooperativeKernel((void*)emptyKernel, dim3(blocks), dim3(unsigned(threads)), nullptr, 0, 0)); });
    }
    return 0;
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

// Runs are numbered as in Rust's timing::time_runs: warm-ups, then the
// queued runs, then the waited ones; work(k) writes its total to slot k.
template <typename Work>
static void timeRuns(int runs, int warmups, Work work, Stats& queued, Stats& waited) {
    for (int k = 0; k < warmups; ++k) work(k);
    std::vector<cudaEvent_t> start(runs), end(runs);
    for (int r = 0; r < runs; ++r) {
        CHECK(cudaEventCreate(&start[r]));
        CHECK(cudaEventCreate(&end[r]));
    }
    for (int r = 0; r < runs; ++r) {
        CHECK(cudaEventRecord(start[r]));
        work(warmups + r);
        CHECK(cudaEventRecord(end[r]));
    }
    CHECK(cudaEventSynchronize(end[runs - 1]));
    std::vector<double> ms(runs);
    for (int r = 0; r < runs; ++r) {
        float t = 0;
        CHECK(cudaEventElapsedTime(&t, start[r], end[r]));
        ms[r] = t;
    }
    queued = summarize(ms);
    for (int r = 0; r < runs; ++r) {
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaEventRecord(start[0]));
        work(warmups + runs + r);
        CHECK(cudaEventRecord(end[0]));
        CHECK(cudaEventSynchronize(end[0]));
        float t = 0;
        CHECK(cudaEventElapsedTime(&t, start[0], end[0]));
        ms[r] = t;
    }
    waited = summarize(ms);
    for (int r = 0; r < runs; ++r) {
        CHECK(cudaEventDestroy(start[r]));
        CHECK(cudaEventDestroy(end[r]));
    }
}

int main(int argc, char** argv) {
    if (argc == 4 && std::string(argv[1]) == "launch-cost") {
        return launchCosts(std::atoi(argv[2]), std::atoi(argv[3]));
    }
    if (argc < 5) {
        std::fprintf(stderr, "usage: %s RUNS WARMUPS THREADS N:ROTATE...\n", argv[0]);
        return 2;
    }
    const int runs = std::atoi(argv[1]), warmups = std::atoi(argv[2]), threads = std::atoi(argv[3]);
    const int slots = warmups + 2 * runs;
    const size_t smem = oneFloatPerTile(threads);
    int device = 0, sms = 0, perSm = 0;
    CHECK(cudaGetDevice(&device));
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, reduceCooperativeGrid, threads, smem));
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
        float *partials, *totals;
        CHECK(cudaMalloc(&partials, blocks * sizeof(float)));
        CHECK(cudaMalloc(&totals, slots * sizeof(float)));
        size_t tempBytes = 0;
        CHECK(cub::DeviceReduce::Sum(nullptr, tempBytes, inputs[0], totals, n));
        void* temp;
        CHECK(cudaMalloc(&temp, std::max<size_t>(tempBytes, 1)));

        auto report = [&](const char* variant, size_t grid, auto work) {
            CHECK(cudaMemset(totals, 0xff, slots * sizeof(float)));  // NaN in every slot
            Stats queued, waited;
            timeRuns(runs, warmups, work, queued, waited);
            std::vector<float> t(slots);
            CHECK(cudaMemcpy(t.data(), totals, slots * sizeof(float), cudaMemcpyDeviceToHost));
            int nans = 0;
            float lo = INFINITY, hi = -INFINITY;
            for (int k = 0; k < slots; ++k) {
                if (std::isnan(t[k])) {
                    ++nans;
                } else {
                    lo = std::min(lo, t[k]);
                    hi = std::max(hi, t[k]);
                }
            }
            const Stats* s[2] = {&queued, &waited};
            const char* method[2] = {"queued", "waited"};
            for (int m = 0; m < 2; ++m) {
                std::printf("RESULT %s %s %zu %d %.6f %.6f %.6f %.6f %d %zu %.6f %.6f %d\n", variant, method[m], n, rotate,
                            s[m]->median, s[m]->min, s[m]->max, s[m]->mean, runs, grid, lo, hi, nans);
            }
            std::fflush(stdout);
        };

        report("cpp-two-launches", blocks, [&](int k) {
            reduceBlocksToPartials<<<blocks, threads, smem>>>(inputs[k % rotate], partials, n);
            reducePartialsToTotal<<<1, threads, smem>>>(partials, totals + k, blocks);
            CHECK(cudaGetLastError());
        });

        cudaLaunchAttribute coop[1] = {};
        coop[0].id = cudaLaunchAttributeCooperative;
        coop[0].val.cooperative = 1;
        cudaLaunchConfig_t config = {};
        config.gridDim = dim3(unsigned(blocks));
        config.blockDim = dim3(unsigned(threads));
        config.dynamicSmemBytes = smem;
        config.attrs = coop;
        config.numAttrs = 1;
        report("cpp-cooperative", blocks, [&](int k) {
            CHECK(cudaLaunchKernelEx(&config, reduceCooperativeGrid, (const float*)inputs[k % rotate], partials, totals + k, n));
        });

        report("cub-device-reduce", 0, [&](int k) {
            CHECK(cub::DeviceReduce::Sum(temp, tempBytes, inputs[k % rotate], totals + k, n));
        });

        CHECK(cudaFree(all));
        CHECK(cudaFree(partials));
        CHECK(cudaFree(totals));
        CHECK(cudaFree(temp));
    }
    return 0;
}
