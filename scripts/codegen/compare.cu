// Times the lesson's three kernels from several PTX modules through one
// launch path (cuLaunchKernelEx; the cooperative attribute for the grid-sync
// kernel): the same grid, input and timing for each, so the differences are
// the kernels' code. Each module is `LABEL=FILE[:LAYOUT]`; LAYOUT `ours`
// (this project's and nvcc's names and parameters, camelCase for nvcc, 32 B
// of dynamic shared memory), `static` (the same, launched with no dynamic
// shared memory, for a module that declares it statically) or `oxide`
// (cuda-oxide's slices: pointer and length pairs; `oxidedyn` the same with
// 32 B of dynamic shared memory).
// Timing: 200 runs queued behind a kernel that holds the GPU until all are
// queued, then run back to back; CUDA events around the 200; median of 5
// such batches. One input buffer (L2-resident up to ~8M floats) or, with
// ROTATE=1, copies rotated so that a pass over them is twice the L2.
// N=n or N=n1,n2,... runs those sizes only (one for a profiler).
// FULLGRID=1 launches the cooperative maximum at every n, as the lesson and
// the bench do, instead of one block per 256 floats up to it. PERRUN=1 times
// as the bench does: each run between its own events, 32 behind a hold.
// TRACE=1: for each module whose PTX has a `.global .u64 cg_trace[16384]`
// (added by instrument.py: per block, thread 0's %globaltimer at start, at
// arrival at the grid barrier, on leaving it, its SM, and at exit), 30
// cooperative launches per size, each alone (the GPU idle before it) and each
// the last of 10 queued back to back; the medians of their spreads.
// Build: nvcc -std=c++17 -O2 -arch=sm_90 -o compare compare.cu -lcuda
#include <cuda.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#define CK(x) check((x), #x, __LINE__)
static void check(CUresult r, const char* what, int line) {
    if (r != CUDA_SUCCESS) {
        const char* s;
        cuGetErrorName(r, &s);
        fprintf(stderr, "line %d: %s -> %s\n", line, what, s);
        exit(1);
    }
}

__global__ void holdFor(unsigned long long ns) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now)); } while (now - start < ns);
}

struct Module {
    std::string label;
    bool oxide;
    CUfunction stage1, stage2, coop;
    unsigned smem;
    CUdeviceptr trace;
};

static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// One traced launch's stamps, relative to the first block's start (ns):
// last start, first/median/last arrival, first/last leave, block 0's exit.
static std::vector<double> traceStats(const std::vector<unsigned long long>& t, unsigned blocks) {
    unsigned long long t0 = ~0ull;
    for (unsigned b = 0; b < blocks; ++b) t0 = std::min(t0, t[4 * b]);
    std::vector<double> start, arrive, leave, work;
    for (unsigned b = 0; b < blocks; ++b) {
        start.push_back(double(t[4 * b] - t0));
        arrive.push_back(double(t[4 * b + 1] - t0));
        leave.push_back(double(t[4 * b + 2] - t0));
        work.push_back(double(t[4 * b + 1] - t[4 * b]));
    }
    std::vector<double> a = arrive;
    std::sort(a.begin(), a.end());
    double lastStart = *std::max_element(start.begin(), start.end());
    double firstLeave = *std::min_element(leave.begin(), leave.end());
    double lastLeave = *std::max_element(leave.begin(), leave.end());
    return {lastStart, median(work), a.front(), a[a.size() / 2], a.back(), firstLeave, lastLeave, double(t[8192] - t0)};
}

static void launch(CUfunction f, unsigned blocks, unsigned smem, void** args, bool coop, CUstream st) {
    CUlaunchConfig c = {};
    CUlaunchAttribute a[1];
    c.gridDimX = blocks; c.gridDimY = c.gridDimZ = 1;
    c.blockDimX = 256; c.blockDimY = c.blockDimZ = 1;
    c.sharedMemBytes = smem; c.hStream = st;
    if (coop) { a[0].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE; a[0].value.cooperative = 1; c.attrs = a; c.numAttrs = 1; }
    CK(cuLaunchKernelEx(&c, f, args, nullptr));
}

int main(int argc, char** argv) {
    CK(cuInit(0));
    CUdevice d; CK(cuDeviceGet(&d, 0));
    CUcontext ctx; CK(cuDevicePrimaryCtxRetain(&ctx, d)); CK(cuCtxSetCurrent(ctx));
    int sms; CK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d));
    int l2; CK(cuDeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, d));
    bool rotate = getenv("ROTATE") && strcmp(getenv("ROTATE"), "1") == 0;
    bool perRun = getenv("PERRUN") != nullptr;
    std::vector<Module> mods;
    unsigned cap = 1u << 30;
    for (int a = 1; a < argc; ++a) {
        std::string arg = argv[a];
        size_t eq = arg.find('=');
        std::string label = arg.substr(0, eq), file = arg.substr(eq + 1), layout = "ours";
        size_t colon = file.rfind(':');
        if (colon != std::string::npos) { layout = file.substr(colon + 1); file = file.substr(0, colon); }
        std::ifstream in(file); std::stringstream ss; ss << in.rdbuf();
        CUmodule m; CK(cuModuleLoadData(&m, ss.str().c_str()));
        Module mod{label, layout == "oxide" || layout == "oxidedyn", 0, 0, 0, layout == "ours" || layout == "oxidedyn" ? 32u : 0u, 0};
        size_t traceBytes = 0;
        if (cuModuleGetGlobal(&mod.trace, &traceBytes, m, "cg_trace") != CUDA_SUCCESS) mod.trace = 0;
        bool camel = cuModuleGetFunction(&mod.stage1, m, "reduceBlocksToPartials") == CUDA_SUCCESS;
        if (camel) { CK(cuModuleGetFunction(&mod.stage2, m, "reducePartialsToTotal")); CK(cuModuleGetFunction(&mod.coop, m, "reduceCooperativeGrid")); }
        else {
            CK(cuModuleGetFunction(&mod.stage1, m, "reduce_blocks_to_partials"));
            CK(cuModuleGetFunction(&mod.stage2, m, "reduce_partials_to_total"));
            CK(cuModuleGetFunction(&mod.coop, m, "reduce_cooperative_grid"));
        }
        int bps, regs; CK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&bps, mod.coop, 256, mod.smem));
        CK(cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, mod.coop));
        int regs1; CK(cuFuncGetAttribute(&regs1, CU_FUNC_ATTRIBUTE_NUM_REGS, mod.stage1));
        printf("%-14s %s: cooperative kernel %d registers (stage 1: %d), %d blocks/SM x %d SMs = %d\n", label.c_str(), file.c_str(), regs, regs1, bps, sms, bps * sms);
        cap = std::min(cap, unsigned(bps * sms));
        mods.push_back(mod);
    }
    printf("\nGPU time per sum, us: %s; %s\n", perRun ? "median of 128 runs, each between its own events, 32 queued behind a hold at a time (the bench's way)" : "median of 5 batches of 200 runs queued behind a hold", rotate ? "inputs rotated (twice the L2 per pass)" : "one input buffer");
    printf("%11s %6s", "n", "blocks");
    for (auto& m : mods) printf(" %11s %11s", (m.label + " 2L").c_str(), (m.label + " co").c_str());
    printf("   ratios to the first module (2L, coop)\n");
    CUstream st; CK(cuStreamCreate(&st, CU_STREAM_NON_BLOCKING));
    const int runs = 200, batches = 5;
    std::vector<CUevent> ev(2 * batches);
    for (auto& e : ev) CK(cuEventCreate(&e, 0));
    std::vector<size_t> ns = {65536, 131072, 262144, 524288, 1048576, 2097152, 4194304, 4194915, 16777216, 67108864, 268435456};
    if (getenv("N")) {
        ns.clear();
        for (const char* p = getenv("N"); *p;) {
            char* e;
            ns.push_back((size_t)strtoull(p, &e, 10));
            p = *e ? e + 1 : e;
        }
    }
    for (size_t n : ns) {
        std::vector<float> h(n);
        double ref = 0;
        for (size_t i = 0; i < n; ++i) { h[i] = 0.5f + float((i * 2654435761ull) % 1024) / 1024.0f; ref += h[i]; }
        size_t copies = rotate ? std::max<size_t>(1, std::min<size_t>(256, (2 * (size_t)l2 + n * 4 - 1) / (n * 4))) : 1;
        CUdeviceptr in, part, out;
        CK(cuMemAlloc(&in, n * 4 * copies)); CK(cuMemAlloc(&part, 8192 * 4)); CK(cuMemAlloc(&out, 4));
        for (size_t c = 0; c < copies; ++c) CK(cuMemcpyHtoD(in + c * n * 4, h.data(), n * 4));
        unsigned blocks = getenv("FULLGRID") ? cap : (unsigned)std::min<size_t>((n + 255) / 256, cap);
        printf("%11zu %6u", n, blocks);
        std::vector<double> t;
        for (auto& m : mods) for (int path = 0; path < 2; ++path) {
            size_t k = 0;
            auto once = [&]() {
                CUdeviceptr x = in + (k++ % copies) * n * 4;
                size_t nn = n, mb = blocks, one = 1;
                void *a1[] = {&x, &part, &nn}, *a2[] = {&part, &out, &mb}, *ac[] = {&x, &part, &out, &nn};
                void *o1[] = {&x, &nn, &part, &mb}, *o2[] = {&part, &mb, &out, &one}, *oc[] = {&x, &nn, &part, &mb, &out, &one};
                if (path == 0) {
                    launch(m.stage1, blocks, m.smem, m.oxide ? o1 : a1, false, st);
                    launch(m.stage2, 1, m.smem, m.oxide ? o2 : a2, false, st);
                } else {
                    launch(m.coop, blocks, m.smem, m.oxide ? oc : ac, true, st);
                }
            };
            for (int r = 0; r < 20; ++r) once();
            std::vector<double> per;
            if (perRun) {
                // The bench's way: each run between its own pair of events,
                // 32 runs queued behind a hold per batch; the median run.
                std::vector<CUevent> pe(64);
                for (auto& e : pe) CK(cuEventCreate(&e, 0));
                for (int b = 0; b < 4; ++b) {
                    holdFor<<<1, 32, 0, (cudaStream_t)st>>>(2000000ull);
                    for (int r = 0; r < 32; ++r) { CK(cuEventRecord(pe[2 * r], st)); once(); CK(cuEventRecord(pe[2 * r + 1], st)); }
                    CK(cuEventSynchronize(pe[63]));
                    for (int r = 0; r < 32; ++r) { float ms; CK(cuEventElapsedTime(&ms, pe[2 * r], pe[2 * r + 1])); per.push_back(ms * 1000.0); }
                }
                for (auto& e : pe) CK(cuEventDestroy(e));
            }
            for (int b = 0; b < (perRun ? 0 : batches); ++b) {
                holdFor<<<1, 32, 0, (cudaStream_t)st>>>(5000000ull);
                CK(cuEventRecord(ev[2 * b], st));
                for (int r = 0; r < runs; ++r) once();
                CK(cuEventRecord(ev[2 * b + 1], st));
                CK(cuEventSynchronize(ev[2 * b + 1]));
                float ms; CK(cuEventElapsedTime(&ms, ev[2 * b], ev[2 * b + 1]));
                per.push_back(ms * 1000.0 / runs);
            }
            std::sort(per.begin(), per.end());
            t.push_back(per[per.size() / 2]);
            float res; CK(cuMemcpyDtoH(&res, out, 4));
            if (std::fabs(res - ref) > 1e-5 * ref + 1e-3) printf(" WRONG(%s %d: %f vs %f)", m.label.c_str(), path, res, ref);
        }
        for (double x : t) printf(" %11.2f", x);
        printf("  ");
        for (size_t k = 2; k < t.size(); ++k) printf(" %.3f", t[k] / t[k % 2]);
        printf("\n");
        if (getenv("TRACE")) {
            printf("  traced, ns from the first block's start, median of 30 launches (alone, and the last of 10 queued):\n");
            printf("  %-12s %10s %10s %10s %10s %10s %10s %10s %10s\n", "module", "lastStart", "work(med)", "arrive0", "arriveMed", "arriveLast", "leave0", "leaveLast", "b0exit");
            for (int queued = 0; queued < 2; ++queued) for (auto& m : mods) {
                if (!m.trace) continue;
                std::vector<std::vector<double>> all(8);
                std::vector<unsigned long long> buf(16384);
                for (int r = 0; r < 30; ++r) {
                    CUdeviceptr x = in;
                    size_t nn = n, mb = blocks, one = 1;
                    void *ac[] = {&x, &part, &out, &nn}, *oc[] = {&x, &nn, &part, &mb, &out, &one};
                    for (int q = 0; q < (queued ? 10 : 1); ++q) launch(m.coop, blocks, m.smem, m.oxide ? oc : ac, true, st);
                    CK(cuStreamSynchronize(st));
                    CK(cuMemcpyDtoH(buf.data(), m.trace, 16384 * 8));
                    auto s = traceStats(buf, blocks);
                    for (int k = 0; k < 8; ++k) all[k].push_back(s[k]);
                }
                printf("  %-12s", (m.label + (queued ? " queued" : " alone")).c_str());
                for (int k = 0; k < 8; ++k) printf(" %10.0f", median(all[k]));
                printf("   workspace %#llx\n", buf[16000]);
            }
        }
        fflush(stdout);
        CK(cuMemFree(in)); CK(cuMemFree(part)); CK(cuMemFree(out));
    }
    return 0;
}
