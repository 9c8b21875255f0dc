// Where the watched barrier's memory sits, and what that costs: one build
// of this project's PTX, grid_sync_loop__watched timed with its barrier
// memory at each of several places (8 KiB apart in one allocation, then in
// allocations of their own), in rounds that visit every place in turn, and
// the same loop of an older build whose barrier memory is a module static.
//
// Build: nvcc -O2 -std=c++17 -o barrier-placement scripts/barrier-placement.cu -lcuda
// Run:   barrier-placement ROUNDS new.ptx [old.ptx]
#include <cuda.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
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

static float median(std::vector<float> v) {
    std::sort(v.begin(), v.end());
    size_t h = v.size() / 2;
    return v.size() % 2 ? v[h] : 0.5f * (v[h - 1] + v[h]);
}

// Microseconds per grid.sync(): (t(2000) - t(0)) / 2000, medians of 3.
static float cost(CUfunction f, unsigned blocks, unsigned threads, CUdeviceptr barrier, CUstream s) {
    CUevent a, b;
    CHECK(cuEventCreate(&a, CU_EVENT_DEFAULT));
    CHECK(cuEventCreate(&b, CU_EVENT_DEFAULT));
    auto run = [&](unsigned k) {
        void* params[] = {&k, &barrier};
        CHECK(cuEventRecord(a, s));
        CHECK(cuLaunchCooperativeKernel(f, blocks, 1, 1, threads, 1, 1, 0, s, params));
        CHECK(cuEventRecord(b, s));
        CHECK(cuEventSynchronize(b));
        float ms;
        CHECK(cuEventElapsedTime(&ms, a, b));
        return ms;
    };
    std::vector<float> t0, tk;
    for (int r = 0; r < 3; ++r) {
        t0.push_back(run(0));
        tk.push_back(run(2000));
    }
    CHECK(cuEventDestroy(a));
    CHECK(cuEventDestroy(b));
    return (median(tk) - median(t0)) * 1000.0f / 2000;
}

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s ROUNDS new.ptx [old.ptx]\n", argv[0]);
        return 2;
    }
    int rounds = std::atoi(argv[1]);
    CHECK(cuInit(0));
    CUdevice dev;
    CHECK(cuDeviceGet(&dev, 0));
    CUcontext ctx;
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    CUmodule mnew, mold = nullptr;
    CHECK(cuModuleLoad(&mnew, argv[2]));
    if (argc > 3) CHECK(cuModuleLoad(&mold, argv[3]));
    CUfunction fnew, fold = nullptr;
    CHECK(cuModuleGetFunction(&fnew, mnew, "grid_sync_loop__watched"));
    if (mold) CHECK(cuModuleGetFunction(&fold, mold, "grid_sync_loop__watched"));
    CUstream s;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));

    // 16 places 8 KiB apart in one 128 KiB allocation, then 8 allocations of 8 KiB.
    std::vector<CUdeviceptr> places;
    CUdeviceptr slab;
    CHECK(cuMemAlloc(&slab, 16 * 8192));
    CHECK(cuMemsetD8(slab, 0, 16 * 8192));
    for (int i = 0; i < 16; ++i) places.push_back(slab + i * 8192);
    for (int i = 0; i < 8; ++i) {
        CUdeviceptr p;
        CHECK(cuMemAlloc(&p, 8192));
        CHECK(cuMemsetD8(p, 0, 8192));
        places.push_back(p);
    }
    CHECK(cuCtxSynchronize());
    unsigned grids[2][2] = {{1056, 256}, {4224, 32}};
    for (auto& g : grids) {
        std::vector<std::vector<float>> t(places.size() + 1);
        for (int r = 0; r < rounds; ++r) {
            for (size_t i = 0; i < places.size(); ++i) t[i].push_back(cost(fnew, g[0], g[1], places[i], s));
            if (fold) t[places.size()].push_back(cost(fold, g[0], g[1], places[0], s));
        }
        std::printf("\n%u x %u: us per grid.sync, median of %d rounds\n", g[0], g[1], rounds);
        for (size_t i = 0; i < places.size(); ++i)
            std::printf("  place %2zu (address %#llx, bits 13-20 %#llx): %.4f\n", i, (unsigned long long)places[i], ((unsigned long long)places[i] >> 13) & 0xff, median(t[i]));
        if (fold) std::printf("  older build, module static: %.4f\n", median(t[places.size()]));
    }
    return 0;
}
