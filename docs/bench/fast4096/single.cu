// Issue #31, fast / CUB at small n: is the gap the kernel or the process,
// and does a change to the kernel close it? One process times, in
// alternating rounds, CUB's DeviceReduce::Sum and this project's
// `reduce_single_block` from each module given (one block, as the fast path
// launches it: 256 threads up to 4,096 floats, 512 at 8,192, 1,024 above).
// Each run sits between its own pair of events, 32 runs queued behind a
// spinning kernel (as the bench's time_queued), inputs rotated over 64
// copies; per round, each variant's median; the ratio to CUB per round, and
// the median of the ratios. Every variant's last batch of totals is checked
// against the double sums of its inputs.
//
// Build: nvcc -std=c++17 -O3 -arch=sm_90 -o single single.cu -lcuda
// Run:   ./single [--rounds R] [--n N,N,...] label=module ...
//        (a module is a PTX file, JIT by the driver as the host loads it, or a cubin)
// First use (2026-12-01): ./single sm70=gpu.ptx sm90=gpu_sm90.ptx cubin=gpu.cubin --n 4096
// Results: docs/bench/NOTES.md.
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

static int threadsFor(size_t n) { return n <= 4096 ? 256 : n <= 8192 ? 512 : 1024; }

int main(int argc, char** argv) {
    int rounds = 30;
    std::vector<size_t> sizes = {4096};
    std::vector<std::string> labels;
    std::vector<CUfunction> fns;
    CHECK(cudaFree(0));
    for (int a = 1; a < argc; ++a) {
        std::string arg = argv[a];
        if (arg == "--rounds" && a + 1 < argc) {
            rounds = atoi(argv[++a]);
        } else if (arg == "--n" && a + 1 < argc) {
            sizes.clear();
            std::stringstream list(argv[++a]);
            for (std::string item; std::getline(list, item, ',');) sizes.push_back(std::stoull(item));
        } else if (arg.find('=') != std::string::npos) {
            std::string label = arg.substr(0, arg.find('=')), image = slurp(arg.substr(arg.find('=') + 1).c_str());
            CUmodule m;
            CUfunction f;
            DRV(cuModuleLoadData(&m, image.c_str()));
            DRV(cuModuleGetFunction(&f, m, "reduce_single_block"));
            int regs, local;
            DRV(cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, f));
            DRV(cuFuncGetAttribute(&local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f));
            std::printf("%s: %d registers, %d local bytes\n", label.c_str(), regs, local);
            labels.push_back(label);
            fns.push_back(f);
        } else {
            std::fprintf(stderr, "usage: %s [--rounds R] [--n N,N,...] label=module ...\n", argv[0]);
            return 2;
        }
    }
    if (fns.empty() || rounds < 2) {
        std::fprintf(stderr, "usage: %s [--rounds R] [--n N,N,...] label=module ... (at least one module, 2 rounds)\n", argv[0]);
        return 2;
    }
    const int batch = 32, copies = 64, variants = 1 + int(fns.size());
    const size_t most = *std::max_element(sizes.begin(), sizes.end());
    std::vector<float> host(most * copies);
    for (size_t i = 0; i < host.size(); ++i) host[i] = float((i * 2654435761u) % 1000) / 1000.0f;
    float *in, *out;
    CHECK(cudaMalloc(&in, host.size() * sizeof(float)));
    CHECK(cudaMalloc(&out, variants * batch * sizeof(float)));
    CHECK(cudaMemcpy(in, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<cudaEvent_t> ev(2 * batch);
    for (auto& e : ev) CHECK(cudaEventCreate(&e));
    bool allRight = true;
    for (size_t n : sizes) {
        void* temp = nullptr;
        size_t tempBytes = 0;
        CHECK(cub::DeviceReduce::Sum(temp, tempBytes, in, out, int(n)));
        CHECK(cudaMalloc(&temp, tempBytes));
        // Variant 0: CUB; v > 0: the Rust kernel from module v - 1.
        auto run = [&](int v, int k) {
            float* x = in + (k % copies) * n;
            float* o = out + v * batch + k % batch;
            if (v == 0) {
                CHECK(cub::DeviceReduce::Sum(temp, tempBytes, x, o, int(n)));
            } else {
                unsigned long long nn = n;
                void* args[] = {&x, &o, &nn};
                int threads = threadsFor(n);
                DRV(cuLaunchKernel(fns[v - 1], 1, 1, 1, threads, 1, 1, threads / 32 * 4, 0, args, nullptr));
            }
        };
        int k = 0;
        auto timeBatch = [&](int v) {
            hold<<<1, 1>>>(200000);
            int first = k;
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
            // This batch's totals, each against the double sum of its copy.
            std::vector<float> got(batch);
            CHECK(cudaMemcpy(got.data(), out + v * batch, batch * sizeof(float), cudaMemcpyDeviceToHost));
            for (int b = 0; b < batch; ++b) {
                int copy = (first + b) % copies;
                double ref = 0;
                for (size_t i = 0; i < n; ++i) ref += host[copy * n + i];
                if (std::fabs(got[(first + b) % batch] - ref) > 1e-5 * std::fabs(ref) + 1e-3) {
                    if (allRight) std::printf("WRONG: variant %d, n %zu, copy %d: %.6f against %.6f\n", v, n, copy, got[(first + b) % batch], ref);
                    allRight = false;
                }
            }
            return median(t);
        };
        for (int v = 0; v < variants; ++v)
            for (int w = 0; w < 3; ++w) timeBatch(v);
        std::vector<std::vector<double>> per(variants);
        for (int r = 0; r < rounds; ++r)
            for (int i = 0; i < variants; ++i) {
                int v = r % 2 ? variants - 1 - i : i;
                per[v].push_back(timeBatch(v));
            }
        std::printf("n = %zu (%d threads), %d rounds of %d runs:\n", n, threadsFor(n), rounds, batch);
        for (int v = 0; v < variants; ++v) {
            std::vector<double> ratio;
            for (int r = 0; r < rounds; ++r) ratio.push_back(per[v][r] / per[0][r]);
            std::sort(ratio.begin(), ratio.end());
            std::printf("  %-24s median %.3f us (rounds %.3f-%.3f); / cub: median %.4f, middle half %.4f-%.4f\n",
                        v == 0 ? "cub DeviceReduce::Sum" : labels[v - 1].c_str(), median(per[v]),
                        *std::min_element(per[v].begin(), per[v].end()), *std::max_element(per[v].begin(), per[v].end()), median(ratio),
                        ratio[rounds / 4], ratio[3 * rounds / 4]);
        }
        CHECK(cudaFree(temp));
    }
    std::printf(allRight ? "every total checked: right\n" : "SOME TOTALS WRONG (above)\n");
    return allRight ? 0 : 1;
}
