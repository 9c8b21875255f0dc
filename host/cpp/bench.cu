// The lesson's two sums (lesson.cu) and CUB's DeviceReduce::Sum, timed the
// way `cg-lesson bench` times the Rust kernels, on the same input and rotation,
// so that the two languages are compared on one GPU in one run.
//
// Usage: bench_cpp RUNS WARMUPS THREADS N:ROTATE [N:ROTATE ...]
//        bench_cpp launch-cost LAUNCHES THREADS
// The second form times launches of an empty kernel on the host, each way
// the runtime offers, at 1 block and at the cooperative maximum (see
// launchCost), and prints
//   LAUNCH <call> <cooperative 0|1> <blocks> <launches> <submit_us> <total_us> <held_us> <gpu_us>
// Prints one line per measurement and timing method:
//   RESULT <variant> <method> <n> <rotate> <median_ms> <min_ms> <max_ms> <mean_ms> <runs> <blocks> <min_total> <max_total> <nan_totals>
// method: queued (every run between its own pair of events, runs queued back
// to back, one wait at the end) or waited (the host waits for each run).
// Every run, warm-ups included, writes its total to its own slot (poisoned
// with NaN first); `cg-lesson bench` checks the smallest and largest against the
// double reference, and that none is NaN.
#include "lesson.cu"
#include <cub/device/device_reduce.cuh>

#include <algorithm>
#include <chrono>
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

// hold_for in Rust (gpu/src/kernels/timing.rs): one thread waits until the
// GPU's clock has advanced ns nanoseconds.
extern "C" __global__ void holdFor(unsigned long long ns) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        unsigned long long start, now;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
        do {
            asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        } while (now - start < ns);
    }
}

// Host time per launch, two ways (as host/src/bench/launch_cost.rs): held,
// the median of 7 times 256 launches queued behind a 50 ms holdFor (nan where
// the host took more than half the hold); back to back, LAUNCHES on an idle
// GPU, to the last call's return and until the GPU has run them all.
template <typename Launch>
static void launchCost(const char* call, int cooperative, unsigned blocks, int launches, Launch launch) {
    for (int i = 0; i < 100; ++i) launch();
    CHECK(cudaDeviceSynchronize());
    const unsigned long long holdNs = 50000000ull;
    const int held = 256;
    std::vector<double> heldUs;
    for (int k = 0; k < 7; ++k) {
        holdFor<<<1, 32>>>(holdNs);
        auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < held; ++i) launch();
        double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
        CHECK(cudaDeviceSynchronize());
        heldUs.push_back(ns * 2 > double(holdNs) ? NAN : ns / 1e3 / held);
    }
    std::sort(heldUs.begin(), heldUs.end(), [](double a, double b) { return std::isnan(b) ? !std::isnan(a) : a < b; });
    // GPU time per launch: 64 launches between two events, queued behind a hold.
    const int onGpu = 64;
    std::vector<double> gpuUs;
    cudaEvent_t before, after;
    CHECK(cudaEventCreate(&before));
    CHECK(cudaEventCreate(&after));
    for (int k = 0; k < 7; ++k) {
        holdFor<<<1, 32>>>(2000000ull);
        CHECK(cudaEventRecord(before));
        for (int i = 0; i < onGpu; ++i) launch();
        CHECK(cudaEventRecord(after));
        CHECK(cudaEventSynchronize(after));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, before, after));
        gpuUs.push_back(ms * 1e3 / onGpu);
    }
    std::sort(gpuUs.begin(), gpuUs.end());
    CHECK(cudaEventDestroy(before));
    CHECK(cudaEventDestroy(after));
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < launches; ++i) launch();
    auto submitted = std::chrono::steady_clock::now();
    CHECK(cudaDeviceSynchronize());
    auto done = std::chrono::steady_clock::now();
    auto us = [&](auto d) { return std::chrono::duration<double, std::micro>(d).count() / launches; };
    std::printf("LAUNCH %s %d %u %d %.4f %.4f %.4f %.4f\n", call, cooperative, blocks, launches, us(submitted - start), us(done - start), heldUs[3], gpuUs[3]);
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

// How long the next batch of timed runs is held (see timeRuns).
static unsigned long long holdNs = 2000000ull;

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
    // Batches of 32 runs, each queued behind holdFor so that the GPU runs it
    // back to back (as Rust's time_queued, crates/cg-launcher/src/device/cuda/mod.rs): a batch
    // the host took more than half the hold to queue runs again behind a
    // hold twice as long, up to 1 s.

    for (int first = 0; first < runs;) {
        const int last = std::min(first + 32, runs);
        holdFor<<<1, 32>>>(holdNs);
        auto queueing = std::chrono::steady_clock::now();
        for (int r = first; r < last; ++r) {
            CHECK(cudaEventRecord(start[r]));
            work(warmups + r);
            CHECK(cudaEventRecord(end[r]));
        }
        auto queuedNs = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - queueing).count();
        CHECK(cudaEventSynchronize(end[last - 1]));
        if (queuedNs * 2 > double(holdNs) && holdNs < 1000000000ull) {
            holdNs *= 2;
            continue;
        }
        first = last;
    }
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

        // Every run writes its own slot, except a graph's: a graph is
        // captured once per input buffer, with that buffer's slot, so only
        // the first `written` slots are written (and checked).
        auto report = [&](const char* variant, size_t grid, int written, auto work) {
            CHECK(cudaMemset(totals, 0xff, slots * sizeof(float)));  // NaN in every slot
            Stats queued, waited;
            timeRuns(runs, warmups, work, queued, waited);
            std::vector<float> t(slots);
            CHECK(cudaMemcpy(t.data(), totals, slots * sizeof(float), cudaMemcpyDeviceToHost));
            int nans = 0;
            float lo = INFINITY, hi = -INFINITY;
            for (int k = 0; k < written; ++k) {
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

        auto twoLaunches = [&](int k) {
            reduceBlocksToPartials<<<blocks, threads, smem>>>(inputs[k % rotate], partials, n);
            reducePartialsToTotal<<<1, threads, smem>>>(partials, totals + k, blocks);
            CHECK(cudaGetLastError());
        };
        // As the Rust bench does (timing::warm_clocks): 10 ms of the two-launch
        // sum, untimed, so the GPU's clock is back up after the host's work
        // between sizes before the first path is timed.
        for (auto start = std::chrono::steady_clock::now(); std::chrono::steady_clock::now() - start < std::chrono::milliseconds(10);) {
            for (int k = 0; k < 32; ++k) twoLaunches(0);
            CHECK(cudaDeviceSynchronize());
        }
        report("cpp-two-launches", blocks, slots, twoLaunches);

        cudaLaunchAttribute coop[1] = {};
        coop[0].id = cudaLaunchAttributeCooperative;
        coop[0].val.cooperative = 1;
        cudaLaunchConfig_t config = {};
        config.gridDim = dim3(unsigned(blocks));
        config.blockDim = dim3(unsigned(threads));
        config.dynamicSmemBytes = smem;
        config.attrs = coop;
        config.numAttrs = 1;
        report("cpp-cooperative", blocks, slots, [&](int k) {
            CHECK(cudaLaunchKernelEx(&config, reduceCooperativeGrid, (const float*)inputs[k % rotate], partials, totals + k, n));
        });

        // The same launches captured once per input buffer as a graph
        // (stream capture on a stream of its own: the legacy default stream
        // cannot be captured), then replayed (host/src/timing.rs does the same).
        const int graphs = std::min(rotate, slots);
        auto capture = [&](auto launches) {
            cudaStream_t side;
            CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
            std::vector<cudaGraphExec_t> execs(graphs);
            for (int j = 0; j < graphs; ++j) {
                CHECK(cudaStreamBeginCapture(side, cudaStreamCaptureModeThreadLocal));
                launches(j, side);
                cudaGraph_t graph;
                CHECK(cudaStreamEndCapture(side, &graph));
                CHECK(cudaGraphInstantiate(&execs[j], graph, 0));
                CHECK(cudaGraphUpload(execs[j], side));
                CHECK(cudaGraphDestroy(graph));
            }
            CHECK(cudaStreamSynchronize(side));
            CHECK(cudaStreamDestroy(side));
            return execs;
        };
        auto replay = [&](const std::vector<cudaGraphExec_t>& execs) {
            return [&execs](int k) { CHECK(cudaGraphLaunch(execs[k % execs.size()], 0)); };
        };
        auto twoLaunchGraphs = capture([&](int j, cudaStream_t s) {
            reduceBlocksToPartials<<<blocks, threads, smem, s>>>(inputs[j], partials, n);
            reducePartialsToTotal<<<1, threads, smem, s>>>(partials, totals + j, blocks);
            CHECK(cudaGetLastError());
        });
        report("cpp-two-launches-graph", blocks, graphs, replay(twoLaunchGraphs));
        auto cooperativeGraphs = capture([&](int j, cudaStream_t s) {
            cudaLaunchConfig_t captured = config;
            captured.stream = s;
            CHECK(cudaLaunchKernelEx(&captured, reduceCooperativeGrid, (const float*)inputs[j], partials, totals + j, n));
        });
        report("cpp-cooperative-graph", blocks, graphs, replay(cooperativeGraphs));
        for (auto e : twoLaunchGraphs) CHECK(cudaGraphExecDestroy(e));
        for (auto e : cooperativeGraphs) CHECK(cudaGraphExecDestroy(e));

        report("cub-device-reduce", 0, slots, [&](int k) {
            CHECK(cub::DeviceReduce::Sum(temp, tempBytes, inputs[k % rotate], totals + k, n));
        });

        CHECK(cudaFree(all));
        CHECK(cudaFree(partials));
        CHECK(cudaFree(totals));
        CHECK(cudaFree(temp));
    }
    return 0;
}
