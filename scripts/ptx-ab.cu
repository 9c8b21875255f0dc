// Paired A/B timing of two or more builds of this project's PTX, in one
// process, on the kernels a change can move: the grid barrier by itself
// (both entries of grid_sync_loop), the lesson's two sums, the fast sum, the
// two-launch sum at small n, and the persistent conjugate-gradient solve. Module 0 is
// the baseline; every round times every module in turn, in an order that
// rotates each round, and each module's time is divided by module 0's in the
// same round. Prints, per case and module: the median time, the median of
// the per-round ratios and its 95% bootstrap interval.
//
// Build: nvcc -O2 -std=c++17 -o ptx-ab scripts/ptx-ab.cu -lcuda
// Run:   ptx-ab ROUNDS base.ptx other.ptx [more.ptx ...]
//
// Every module is launched with the ABI of docs/abi.md: a watched entry
// gets its barrier memory as a last parameter (a build from before that
// ABI ignores the extra parameter: the driver reads only the parameters an
// entry declares).
#include <cuda.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <vector>

#define CHECK(call)                                                                      \
    do {                                                                                 \
        CUresult r_ = (call);                                                            \
        if (r_ != CUDA_SUCCESS) {                                                        \
            const char* s_ = nullptr;                                                    \
            cuGetErrorName(r_, &s_);                                                     \
            std::fprintf(stderr, "%s failed: %s (line %d)\n", #call, s_ ? s_ : "?", __LINE__); \
            std::exit(1);                                                                \
        }                                                                                \
    } while (0)

constexpr size_t kN = 4194915;            // the lesson's n
constexpr unsigned kBarriers = 2000;      // barriers per timed loop
constexpr unsigned kSumRepeats = 50;      // sums per timed sample

struct Module {
    std::string path;
    CUmodule m;
};

static CUfunction fn(const Module& m, const char* name) {
    CUfunction f;
    CHECK(cuModuleGetFunction(&f, m.m, name));
    return f;
}

static float median(std::vector<float> v) {
    std::sort(v.begin(), v.end());
    size_t h = v.size() / 2;
    return v.size() % 2 ? v[h] : 0.5f * (v[h - 1] + v[h]);
}

// Milliseconds of `work`, between two events on the stream.
static float timed(CUstream s, const std::function<void()>& work) {
    CUevent a, b;
    CHECK(cuEventCreate(&a, CU_EVENT_DEFAULT));
    CHECK(cuEventCreate(&b, CU_EVENT_DEFAULT));
    CHECK(cuEventRecord(a, s));
    work();
    CHECK(cuEventRecord(b, s));
    CHECK(cuEventSynchronize(b));
    float ms = 0;
    CHECK(cuEventElapsedTime(&ms, a, b));
    CHECK(cuEventDestroy(a));
    CHECK(cuEventDestroy(b));
    return ms;
}

static void launch(CUfunction f, unsigned blocks, unsigned threads, unsigned shared, CUstream s, bool cooperative, void** params) {
    if (cooperative) CHECK(cuLaunchCooperativeKernel(f, blocks, 1, 1, threads, 1, 1, shared, s, params));
    else CHECK(cuLaunchKernel(f, blocks, 1, 1, threads, 1, 1, shared, s, params, nullptr));
}

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: %s ROUNDS base.ptx other.ptx [more.ptx ...]\n", argv[0]);
        return 2;
    }
    int rounds = std::atoi(argv[1]);
    CHECK(cuInit(0));
    CUdevice dev;
    CHECK(cuDeviceGet(&dev, 0));
    CUcontext ctx;
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    char name[256];
    CHECK(cuDeviceGetName(name, sizeof name, dev));
    int driver = 0, sms = 0;
    CHECK(cuDriverGetVersion(&driver));
    CHECK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
    std::printf("GPU: %s, %d SMs, driver supports CUDA %d.%d; %d rounds\n", name, sms, driver / 1000, driver % 1000 / 10, rounds);
    std::vector<Module> modules;
    for (int i = 2; i < argc; ++i) {
        Module m{argv[i], nullptr};
        CHECK(cuModuleLoad(&m.m, argv[i]));
        modules.push_back(m);
        std::printf("module %zu: %s\n", modules.size() - 1, argv[i]);
    }
    CUstream s;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));

    // The lesson's input (all ones: its sum is exact in float), partials, out,
    // and one block of barrier memory (launches are one at a time, on one stream).
    CUdeviceptr in, partials, out, barrier;
    CHECK(cuMemAlloc(&in, kN * 4));
    CHECK(cuMemsetD32(in, 0x3f800000u, kN));
    CHECK(cuMemAlloc(&partials, 8192 * 4));
    CHECK(cuMemAlloc(&out, 4));
    CHECK(cuMemAlloc(&barrier, 8192));
    CHECK(cuMemsetD8(barrier, 0, 8192));
    CHECK(cuCtxSynchronize());

    struct Case {
        std::string name;
        std::function<float(const Module&)> sample;  // one sample, microseconds
    };
    std::vector<Case> cases;
    // grid.sync() alone: (t(2000 barriers) - t(0)) / 2000, by the entry named.
    auto barrier_case = [&](const char* entry, unsigned blocks, unsigned threads) {
        char label[128];
        std::snprintf(label, sizeof label, "%s, %u x %u (us per grid.sync)", entry, blocks, threads);
        cases.push_back({label, [=, &s, &barrier](const Module& m) {
                             CUfunction f = fn(m, entry);
                             auto run = [&](unsigned k) {
                                 void* params[] = {&k, &barrier};
                                 return timed(s, [&] { launch(f, blocks, threads, 0, s, true, params); });
                             };
                             std::vector<float> t0, tk;
                             for (int r = 0; r < 3; ++r) {
                                 t0.push_back(run(0));
                                 tk.push_back(run(kBarriers));
                             }
                             return (median(tk) - median(t0)) * 1000.0f / kBarriers;
                         }});
    };
    barrier_case("grid_sync_loop__watched", 132 * 8, 256);
    barrier_case("grid_sync_loop__watched", 132 * 32, 32);
    barrier_case("grid_sync_loop", 132 * 4, 256);
    barrier_case("grid_sync_loop", 132, 256);
    // The lesson's sums at its grid (1,056 x 256 on an H200: the watched entry).
    unsigned lessonBlocks = (unsigned)sms * 8, threads = 256, shared = threads / 32 * 4;
    size_t n = kN;
    cases.push_back({"lesson: one cooperative launch (reduce_cooperative_grid__watched), us per sum", [&](const Module& m) {
                         CUfunction f = fn(m, "reduce_cooperative_grid__watched");
                         void* params[] = {&in, &partials, &out, &n, &barrier};
                         return timed(s, [&] { for (unsigned k = 0; k < kSumRepeats; ++k) launch(f, lessonBlocks, threads, shared, s, true, params); }) * 1000.0f / kSumRepeats;
                     }});
    cases.push_back({"lesson: two launches (reduce_blocks_to_partials, reduce_partials_to_total), us per sum", [&](const Module& m) {
                         CUfunction f1 = fn(m, "reduce_blocks_to_partials"), f2 = fn(m, "reduce_partials_to_total");
                         size_t blocks = lessonBlocks;
                         void* p1[] = {&in, &partials, &n};
                         void* p2[] = {&partials, &out, &blocks};
                         return timed(s, [&] {
                                    for (unsigned k = 0; k < kSumRepeats; ++k) {
                                        launch(f1, lessonBlocks, threads, shared, s, false, p1);
                                        launch(f2, 1, threads, shared, s, false, p2);
                                    }
                                }) * 1000.0f / kSumRepeats;
                     }});
    cases.push_back({"lesson: cooperative sum on half the grid (reduce_cooperative_grid, the single word), us per sum", [&](const Module& m) {
                         CUfunction f = fn(m, "reduce_cooperative_grid");
                         void* params[] = {&in, &partials, &out, &n, &barrier};
                         return timed(s, [&] { for (unsigned k = 0; k < kSumRepeats; ++k) launch(f, lessonBlocks / 2, threads, shared, s, true, params); }) * 1000.0f / kSumRepeats;
                     }});

    cases.push_back({"fast sum (reduce_cooperative_fast__watched), us per sum", [&](const Module& m) {
                         CUfunction f = fn(m, "reduce_cooperative_fast__watched");
                         void* params[] = {&in, &partials, &out, &n, &barrier};
                         return timed(s, [&] { for (unsigned k = 0; k < kSumRepeats; ++k) launch(f, lessonBlocks, threads, shared, s, true, params); }) * 1000.0f / kSumRepeats;
                     }});
    // The two-launch sum where its ratio to nvcc's was 1.055-1.066 (n = 65,536
    // and 131,072, the lesson's grid), launch-bound: queued back to back.
    for (size_t small : {size_t(65536), size_t(131072)}) {
        char label[160];
        std::snprintf(label, sizeof label, "two launches at n = %zu, us per sum", small);
        cases.push_back({label, [=, &s, &in, &partials, &out](const Module& m) {
                             CUfunction f1 = fn(m, "reduce_blocks_to_partials"), f2 = fn(m, "reduce_partials_to_total");
                             size_t blocks = lessonBlocks, nn = small;
                             void* p1[] = {(void*)&in, (void*)&partials, &nn};
                             void* p2[] = {(void*)&partials, (void*)&out, &blocks};
                             return timed(s, [&] {
                                        for (unsigned k = 0; k < kSumRepeats; ++k) {
                                            launch(f1, lessonBlocks, threads, shared, s, false, p1);
                                            launch(f2, 1, threads, shared, s, false, p2);
                                        }
                                    }) * 1000.0f / kSumRepeats;
                         }});
    }
    // The persistent conjugate-gradient solve (gpu/src/kernels/conjugate_gradient.rs),
    // on the samples' tridiagonal matrix (diagonal rand + 10, off-diagonals
    // rand), from x = 0 and r = b = 1, to |r| <= 1e-5. Each module's grid is
    // sized as the host sizes it: its own occupancy (both entries) times the
    // SMs, its watched entry above 960 blocks.
    for (unsigned log2n : {14u, 18u, 20u}) {
        size_t cgN = size_t(1) << log2n, nnz = 3 * cgN - 2;
        std::vector<unsigned> mat(cgN + 1 + nnz);
        std::vector<float> vals(nnz);
        std::mt19937 gen(1234);
        std::uniform_real_distribution<float> u(0.0f, 1.0f);
        std::vector<float> off(cgN);
        for (auto& o : off) o = u(gen);
        size_t k = 0;
        for (size_t i = 0; i < cgN; ++i) {
            mat[i] = (unsigned)k;
            if (i > 0) { mat[cgN + 1 + k] = (unsigned)(i - 1); vals[k++] = off[i - 1]; }
            mat[cgN + 1 + k] = (unsigned)i; vals[k++] = u(gen) + 10.0f;
            if (i + 1 < cgN) { mat[cgN + 1 + k] = (unsigned)(i + 1); vals[k++] = off[i]; }
        }
        mat[cgN] = (unsigned)k;
        CUdeviceptr dMat, dVals, dVec, dState;
        CHECK(cuMemAlloc(&dMat, mat.size() * 4));
        CHECK(cuMemcpyHtoD(dMat, mat.data(), mat.size() * 4));
        CHECK(cuMemAlloc(&dVals, nnz * 4));
        CHECK(cuMemcpyHtoD(dVals, vals.data(), nnz * 4));
        CHECK(cuMemAlloc(&dVec, 4 * cgN * 4));
        CHECK(cuMemAlloc(&dState, (8 + 2 * 8192) * 8));
        char label[160];
        std::snprintf(label, sizeof label, "conjugate gradient, persistent kernel, N = 2^%u, us per solve", log2n);
        cases.push_back({label, [=, &s, &barrier](const Module& m) {
                             unsigned cgShared = threads / 32 * 8;
                             CUfunction plain = fn(m, "conjugate_gradient_persistent"), watched = fn(m, "conjugate_gradient_persistent__watched");
                             int a = 0, b = 0;
                             CHECK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&a, plain, threads, cgShared));
                             CHECK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&b, watched, threads, cgShared));
                             unsigned blocks = (unsigned)(std::min(a, b) * sms);
                             CUfunction f = blocks > 960 ? watched : plain;
                             std::vector<double> state(8, 0.0);
                             state[5] = 1e-10;  // TOLERANCE_SQUARED: (1e-5)^2
                             state[6] = 10000;  // MAX_ITERATIONS
                             CHECK(cuMemsetD32(dVec, 0, cgN));                     // x = 0
                             CHECK(cuMemsetD32(dVec + cgN * 4, 0x3f800000u, cgN));  // r = b = 1
                             CHECK(cuMemcpyHtoD(dState, state.data(), 8 * 8));
                             CHECK(cuCtxSynchronize());
                             size_t nn = cgN;
                             CUdeviceptr mm = dMat, vv = dVals, ve = dVec, st = dState;
                             void* params[] = {&mm, &vv, &ve, &st, &nn, (void*)&barrier};
                             float ms = timed(s, [&] { launch(f, blocks, threads, cgShared, s, true, params); });
                             CHECK(cuMemcpyDtoH(state.data(), dState, 8 * 8));
                             if (state[4] != 1.0 || !(state[0] <= 1e-10)) {
                                 std::fprintf(stderr, "%s: the solve did not converge (r.r %g after %g iterations)\n", m.path.c_str(), state[0], state[3]);
                                 std::exit(1);
                             }
                             static std::set<std::string> told;
                             if (told.insert(m.path + std::to_string(log2n)).second)
                                 std::printf("%s: N = 2^%u on %u blocks (%s), %g iterations, r.r %.3g\n", m.path.c_str(), log2n, blocks, blocks > 960 ? "watched" : "plain", state[3], state[0]);
                             return ms * 1000.0f;
                         }});
    }

    // Each module's sums are right before anything is timed.
    for (size_t i = 0; i < modules.size(); ++i) {
        for (const char* entry : {"reduce_cooperative_grid__watched", "reduce_cooperative_grid"}) {
            float zero = 0, got = 0;
            CHECK(cuMemcpyHtoD(out, &zero, 4));
            CUfunction f = fn(modules[i], entry);
            void* params[] = {&in, &partials, &out, &n, &barrier};
            launch(f, lessonBlocks, threads, shared, s, true, params);
            CHECK(cuStreamSynchronize(s));
            CHECK(cuMemcpyDtoH(&got, out, 4));
            if (got != (float)kN) {
                std::fprintf(stderr, "module %zu: %s summed %f, not %zu\n", i, entry, got, kN);
                return 1;
            }
        }
    }

    std::mt19937 rng(42);
    for (const Case& c : cases) {
        for (const Module& m : modules) c.sample(m);  // warm-up
        std::vector<std::vector<float>> times(modules.size());
        for (int r = 0; r < rounds; ++r)
            for (size_t j = 0; j < modules.size(); ++j) {
                size_t i = (j + r) % modules.size();
                times[i].push_back(c.sample(modules[i]));
            }
        std::printf("\n%s\n", c.name.c_str());
        for (size_t i = 0; i < modules.size(); ++i) {
            std::vector<float> ratio;
            for (int r = 0; r < rounds; ++r) ratio.push_back(times[i][r] / times[0][r]);
            std::vector<float> boot;
            std::uniform_int_distribution<int> pick(0, rounds - 1);
            for (int b = 0; b < 2000; ++b) {
                std::vector<float> sample;
                for (int r = 0; r < rounds; ++r) sample.push_back(ratio[pick(rng)]);
                boot.push_back(median(sample));
            }
            std::sort(boot.begin(), boot.end());
            std::printf("  module %zu  median %.4f  ratio to module 0 %.4f [%.4f, %.4f]  min %.4f max %.4f\n", i, median(times[i]), median(ratio), boot[50], boot[1949],
                        *std::min_element(times[i].begin(), times[i].end()), *std::max_element(times[i].begin(), times[i].end()));
        }
    }
    return 0;
}
