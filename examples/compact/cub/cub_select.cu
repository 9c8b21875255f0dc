// CUB's DeviceSelect::If on the same input and predicate (x > threshold),
// timed with CUDA events on its own stream: the baseline the compaction in
// one cooperative launch is measured against. Built by nvcc at run time
// into a shared library (`compact --bench`).
#include <cub/device/device_select.cuh>
#include <cuda_runtime.h>
#include <cstdio>

static float *d_in = nullptr, *d_out = nullptr;
static int *d_count = nullptr;
static void *d_temp = nullptr;
static size_t temp_bytes = 0;
static int count = 0;
static cudaStream_t stream;

struct Above {
    float threshold;
    __device__ bool operator()(const float &x) const { return x > threshold; }
};
static Above above;

static int check(cudaError_t e, const char *what) {
    if (e != cudaSuccess) {
        fprintf(stderr, "cub_select: %s: %s\n", what, cudaGetErrorString(e));
        return 1;
    }
    return 0;
}

// Holds the stream until the GPU's clock has advanced `ns`, so that the
// host queues the whole batch before it starts (as cg-launcher's
// time_queued does for ours).
__global__ void hold(unsigned long long ns) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
}

extern "C" int cub_setup(const float *x, int n, float threshold) {
    count = n;
    above.threshold = threshold;
    if (check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream")) return 1;
    if (check(cudaMalloc(&d_in, sizeof(float) * (size_t)n), "malloc in")) return 1;
    if (check(cudaMalloc(&d_out, sizeof(float) * (size_t)n), "malloc out")) return 1;
    if (check(cudaMalloc(&d_count, sizeof(int)), "malloc count")) return 1;
    if (check(cudaMemcpy(d_in, x, sizeof(float) * (size_t)n, cudaMemcpyHostToDevice), "copy in")) return 1;
    cub::DeviceSelect::If(nullptr, temp_bytes, d_in, d_out, d_count, n, above, stream);
    if (check(cudaMalloc(&d_temp, temp_bytes), "malloc temp")) return 1;
    return 0;
}

// Milliseconds of each of `runs` selections, by events around each, queued
// back to back behind a 5 ms hold.
extern "C" int cub_time(int runs, float *ms) {
    cudaEvent_t ev[2 * 64];
    if (runs > 64) return 1;
    for (int i = 0; i < 2 * runs; i++) cudaEventCreate(&ev[i]);
    hold<<<1, 1, 0, stream>>>(5000000ull);
    for (int i = 0; i < runs; i++) {
        cudaEventRecord(ev[2 * i], stream);
        cub::DeviceSelect::If(d_temp, temp_bytes, d_in, d_out, d_count, count, above, stream);
        cudaEventRecord(ev[2 * i + 1], stream);
    }
    if (check(cudaStreamSynchronize(stream), "select")) return 1;
    for (int i = 0; i < runs; i++) cudaEventElapsedTime(&ms[i], ev[2 * i], ev[2 * i + 1]);
    for (int i = 0; i < 2 * runs; i++) cudaEventDestroy(ev[i]);
    return 0;
}

// The selected floats (y holds count of them) and how many.
extern "C" int cub_result(float *y, int *selected) {
    if (check(cudaMemcpy(selected, d_count, sizeof(int), cudaMemcpyDeviceToHost), "copy count")) return 1;
    return check(cudaMemcpy(y, d_out, sizeof(float) * (size_t)*selected, cudaMemcpyDeviceToHost), "copy out");
}

extern "C" void cub_teardown(void) {
    cudaFree(d_in);
    cudaFree(d_out);
    cudaFree(d_count);
    cudaFree(d_temp);
    cudaStreamDestroy(stream);
}
