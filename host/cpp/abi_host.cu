// A C++ host that launches this project's PTX by its documented ABI
// (docs/abi.md), with nothing of the Rust host: the CUDA driver API only.
// It runs K launches of grid_sync_stress in flight together, one per
// stream, each with its own barrier memory, and reports the stale reads of
// each. With --share every launch is given the same barrier memory (the
// bug the ABI forbids): the launches then hang, and this host says so by
// name after --timeout seconds instead of waiting for ever.
//
// With --probe B it instead launches probe_cooperative the ordinary way on
// B blocks of T threads: a grid of 2^32 threads or more, which this
// project's host refuses, traps in the kernel rather than wrap a rank.
//
// Build: nvcc -O2 -std=c++17 -o abi_host abi_host.cu -lcuda
// Run:   abi_host gpu.ptx [--launches K] [--threads T] [--blocks B] [--rounds R] [--share] [--timeout S]
//        abi_host gpu.ptx --probe B [--threads T]
// (B blocks per launch; by default the cooperative ceiling shared among the K launches)
// Prints one line: RESULT launches=K blocks=B threads=T entry=NAME stale=s0,s1,.. seconds=X
// or:              HANG launches=K blocks=B threads=T entry=NAME after=S
// or:              PROBE blocks=B threads=T status=CUDA_SUCCESS num_blocks=N (or status=the error)
#include <cuda.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
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

// The ABI's constants (docs/abi.md; gpu::cg::barrier in the Rust source).
constexpr unsigned kWatchedAboveBlocks = 960;   // WATCHED_ABOVE_BLOCKS
constexpr size_t kBarrierBytes = 8192;          // watched::BYTES, 128-byte aligned

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s gpu.ptx [--launches K] [--threads T] [--rounds R] [--share] [--timeout S]\n", argv[0]);
        return 2;
    }
    unsigned launches = 2, threads = 32, rounds = 100000, probe = 0, askedBlocks = 0;
    bool share = false;
    double timeout = 20.0;
    for (int i = 2; i < argc; ++i) {
        std::string a = argv[i];
        auto next = [&]() { return i + 1 < argc ? argv[++i] : (std::fprintf(stderr, "%s needs a value\n", a.c_str()), std::exit(2), nullptr); };
        if (a == "--launches") launches = std::atoi(next());
        else if (a == "--threads") threads = std::atoi(next());
        else if (a == "--rounds") rounds = std::atoi(next());
        else if (a == "--timeout") timeout = std::atof(next());
        else if (a == "--share") share = true;
        else if (a == "--blocks") askedBlocks = (unsigned)std::strtoul(next(), nullptr, 10);
        else if (a == "--probe") probe = (unsigned)std::strtoul(next(), nullptr, 10);
        else { std::fprintf(stderr, "unknown argument %s\n", a.c_str()); return 2; }
    }

    CHECK(cuInit(0));
    CUdevice dev;
    CHECK(cuDeviceGet(&dev, 0));
    CUcontext ctx;
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    CUmodule module;
    CHECK(cuModuleLoad(&module, argv[1]));
    if (probe) {
        CUfunction p;
        CHECK(cuModuleGetFunction(&p, module, "probe_cooperative"));
        CUdeviceptr out;
        CHECK(cuMemAlloc(&out, 8));
        CHECK(cuMemsetD32(out, 0, 2));
        void* params[] = {&out};
        CHECK(cuLaunchKernel(p, probe, 1, 1, threads, 1, 1, 0, nullptr, params, nullptr));
        CUresult r = cuCtxSynchronize();
        const char* name = nullptr;
        cuGetErrorName(r, &name);
        unsigned got[2] = {0, 0};
        if (r == CUDA_SUCCESS) CHECK(cuMemcpyDtoH(got, out, 8));
        std::printf("PROBE blocks=%u threads=%u status=%s num_blocks=%u\n", probe, threads, name ? name : "?", got[1]);
        return 0;
    }
    CUfunction plain, watched;
    CHECK(cuModuleGetFunction(&plain, module, "grid_sync_stress"));
    CHECK(cuModuleGetFunction(&watched, module, "grid_sync_stress__watched"));

    // The grid: blocks per SM from the occupancy API, for both entries (a
    // launch may run either), times the SMs, shared among the launches.
    int sms = 0, perSmPlain = 0, perSmWatched = 0;
    CHECK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
    CHECK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&perSmPlain, plain, threads, 0));
    CHECK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&perSmWatched, watched, threads, 0));
    unsigned capacity = (unsigned)std::min(perSmPlain, perSmWatched) * (unsigned)sms;
    unsigned blocks = askedBlocks ? askedBlocks : capacity / launches;
    if (blocks > capacity) {
        std::fprintf(stderr, "%u blocks of %u: at most %u fit at once\n", blocks, threads, capacity);
        return 2;
    }
    // Either entry is correct on any grid that fits; the threshold is speed.
    bool useWatched = blocks > kWatchedAboveBlocks;
    CUfunction f = useWatched ? watched : plain;
    const char* entry = useWatched ? "grid_sync_stress__watched" : "grid_sync_stress";

    std::vector<CUstream> streams(launches);
    std::vector<CUdeviceptr> slots(launches), errors(launches), barrier(launches);
    for (unsigned k = 0; k < launches; ++k) {
        CHECK(cuStreamCreate(&streams[k], CU_STREAM_NON_BLOCKING));
        CHECK(cuMemAlloc(&slots[k], blocks * 4));
        CHECK(cuMemAlloc(&errors[k], blocks * 4));
        CHECK(cuMemsetD32(errors[k], 0xffffffffu, blocks));  // a launch that never ran cannot pass
        CHECK(cuMemAlloc(&barrier[k], kBarrierBytes));        // cuMemAlloc aligns to 256 bytes
        CHECK(cuMemsetD8(barrier[k], 0, kBarrierBytes));      // zeroed before its first launch
    }
    if (share)
        for (unsigned k = 1; k < launches; ++k) barrier[k] = barrier[0];
    CHECK(cuCtxSynchronize());

    // The declared parameters (slots, errors, rounds, skip_first_sync), then,
    // for the watched entry, the launch's barrier memory.
    unsigned skip = 0;
    auto start = std::chrono::steady_clock::now();
    for (unsigned k = 0; k < launches; ++k) {
        void* params[] = {&slots[k], &errors[k], &rounds, &skip, &barrier[k]};
        CHECK(cuLaunchCooperativeKernel(f, blocks, 1, 1, threads, 1, 1, 0, streams[k], params));
    }
    // Wait, but not for ever: a launch that cannot finish is named, and the
    // process exits with it still running (the driver ends it with the process).
    for (;;) {
        bool done = true;
        for (unsigned k = 0; k < launches; ++k) {
            CUresult r = cuStreamQuery(streams[k]);
            if (r == CUDA_ERROR_NOT_READY) done = false;
            else CHECK(r);
        }
        double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (done) {
            std::printf("RESULT launches=%u blocks=%u threads=%u entry=%s stale=", launches, blocks, threads, entry);
            for (unsigned k = 0; k < launches; ++k) {
                std::vector<unsigned> e(blocks);
                CHECK(cuMemcpyDtoH(e.data(), errors[k], blocks * 4));
                unsigned long long stale = 0;
                for (unsigned x : e) stale += x;
                std::printf("%s%llu", k ? "," : "", stale);
            }
            std::printf(" seconds=%.3f\n", seconds);
            return 0;
        }
        if (seconds > timeout) {
            std::printf("HANG launches=%u blocks=%u threads=%u entry=%s after=%.1f\n", launches, blocks, threads, entry, seconds);
            std::fflush(stdout);
            std::_Exit(3);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}
