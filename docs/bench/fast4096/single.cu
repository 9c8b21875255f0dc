// Issue #31, fast / CUB at 4,096 floats: is the gap the kernel or the
// process? One process times, in alternating rounds, CUB's DeviceReduce::Sum
// and this project's `reduce_single_block` (one block of 256 threads, as the
// fast path launches it at 4,096) loaded three ways: the sm_70 PTX module the
// host loads (JIT by the driver), the sm_90 PTX module, and the sm_70 PTX
// built offline by ptxas into an sm_90 cubin. Each run sits between its own
// pair of events, 32 runs queued behind a spinning kernel (as the bench's
// time_queued), inputs rotated over 64 copies; per round, each variant's
// median; the ratio to CUB per round, and the median of the ratios.
//
// Build: nvcc -std=c++17 -O3 -arch=sm_90 -o single single.cu -lcuda
// (gpu.ptx and gpu_sm90.ptx are the build's modules, target/release/build/gpu-*/out/;
// gpu.cubin is ptxas -arch=sm_90 -O3 gpu.ptx -o gpu.cubin.) Result: docs/bench/NOTES.md.
// Run:   ./single gpu.ptx gpu_sm90.ptx gpu.cubin [rounds]
#include <cub/cub.cuh>
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#define CHECK(call)                                                                                \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorName(e_)); \
            std::exit(1);                                                                          \
        }                                                                                          \
    } while (0)
#define DRV(call)                                                                       \
    do {                                                                                \
        CUresult r_ = (call);                                                           \
        if (r_ != CUDA_SUCCESS) {                                                       \
            const char* s_;                                                             \
            cuGetErrorName(r_, &s_);                                                    \
            std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, s_);      \
            std::exit(1);                                                               \
        }                                                                               \
    } while (0)

__global__ void hold(unsigned long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < ns);
}

static std::string slurp(const char* path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) {
        std::fprintf(stderr, "cannot read %s\n", path);
        std::exit(1);
    }
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: %s gpu.ptx gpu_sm90.ptx gpu.cubin [rounds]\n", argv[0]);
        return 2;
    }
    const int rounds = argc > 4 ? atoi(argv[4]) : 30, batch = 32, copies = 64;
    const size_t n = 4096;
    CHECK(cudaFree(0));
    CUcontext ctx;
    DRV(cuCtxGetCurrent(&ctx));
    CUfunction fns[3];
    const char* names[] = {"rust sm_70 ptx (jit)", "rust sm_90 ptx (jit)", "rust ptxas cubin"};
    for (int i = 0; i < 3; ++i) {
        std::string image = slurp(argv[1 + i]);
        CUmodule m;
        DRV(cuModuleLoadData(&m, image.c_str()));
        DRV(cuModuleGetFunction(&fns[i], m, "reduce_single_block"));
        int regs, local, shared;
        DRV(cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, fns[i]));
        DRV(cuFuncGetAttribute(&local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, fns[i]));
        DRV(cuFuncGetAttribute(&shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fns[i]));
        std::printf("%s: %d registers, %d local bytes, %d static shared bytes\n", names[i], regs, local, shared);
    }
    std::vector<float> host(n * copies);
    for (size_t i = 0; i < host.size(); ++i) host[i] = float((i * 2654435761u) % 1000) / 1000.0f;
    float *in, *out;
    CHECK(cudaMalloc(&in, host.size() * sizeof(float)));
    CHECK(cudaMalloc(&out, 4 * batch * sizeof(float)));
    CHECK(cudaMemcpy(in, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice));
    void* temp = nullptr;
    size_t tempBytes = 0;
    CHECK(cub::DeviceReduce::Sum(temp, tempBytes, in, out, int(n)));
    CHECK(cudaMalloc(&temp, tempBytes));
    std::vector<cudaEvent_t> ev(2 * batch);
    for (auto& e : ev) CHECK(cudaEventCreate(&e));

    // Variant 0: CUB; 1-3: the Rust kernel from each image.
    auto run = [&](int v, int k) {
        float* x = in + (k % copies) * n;
        float* o = out + v * batch + k % batch;
        if (v == 0) {
            CHECK(cub::DeviceReduce::Sum(temp, tempBytes, x, o, int(n)));
        } else {
            unsigned long long nn = n;
            void* args[] = {&x, &o, &nn};
            DRV(cuLaunchKernel(fns[v - 1], 1, 1, 1, 256, 1, 1, 32, 0, args, nullptr));
        }
    };
    auto timeBatch = [&](int v, int& k) {
        hold<<<1, 1>>>(200000);
        for (int b = 0; b < batch; ++b) {
            CHECK(cudaEventRecord(ev[2 * b]));
            run(v, k++);
            CHECK(cudaEventRecord(ev[2 * b + 1]));
        }
        CHECK(cudaEventSynchronize(ev[2 * batch - 1]));
        std::vector<double> t;
        for (int b = 0; b < batch; ++b) {
            float ms;
            CHECK(cudaEventElapsedTime(&ms, ev[2 * b], ev[2 * b + 1]));
            t.push_back(ms * 1e3);
        }
        return median(t);
    };
    int k = 0;
    for (int v = 0; v < 4; ++v)
        for (int w = 0; w < 3; ++w) timeBatch(v, k);
    // Check the totals: every variant's last batch against the double sum of its inputs.
    std::vector<std::vector<double>> per(4);
    for (int r = 0; r < rounds; ++r)
        for (int i = 0; i < 4; ++i) {
            int v = r % 2 ? 3 - i : i;
            per[v].push_back(timeBatch(v, k));
        }
    std::vector<float> totals(4 * batch);
    CHECK(cudaMemcpy(totals.data(), out, totals.size() * sizeof(float), cudaMemcpyDeviceToHost));
    double ref0 = 0;
    for (size_t i = 0; i < n; ++i) ref0 += host[i];
    const char* all[] = {"cub DeviceReduce::Sum", names[0], names[1], names[2]};
    for (int v = 0; v < 4; ++v) {
        std::vector<double> ratio;
        for (int r = 0; r < rounds; ++r) ratio.push_back(per[v][r] / per[0][r]);
        std::sort(ratio.begin(), ratio.end());
        std::printf("%-24s median %.3f us (rounds %.3f-%.3f); / cub: median %.4f, middle half %.4f-%.4f\n", all[v], median(per[v]),
                    *std::min_element(per[v].begin(), per[v].end()), *std::max_element(per[v].begin(), per[v].end()), median(ratio),
                    ratio[rounds / 4], ratio[3 * rounds / 4]);
    }
    std::printf("a total: %.3f (copy 0's double sum %.3f)\n", totals[0], ref0);
    return 0;
}
