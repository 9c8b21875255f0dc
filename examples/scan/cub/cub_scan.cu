// CUB's DeviceScan::InclusiveSum on the same input, timed with CUDA events
// on its own stream: the baseline the grid-synchronized scan is measured
// against. Built by nvcc at run time into a shared library (`scan --bench`).
#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>
#include <cstdio>

static float *d_in = nullptr, *d_out = nullptr;
static void *d_temp = nullptr;
static size_t temp_bytes = 0;
static int count = 0;
static cudaStream_t stream;

static int check(cudaError_t e, const char *what) {
    if (e != cudaSuccess) {
        fprintf(stderr, "cub_scan: %s: %s\n", what, cudaGetErrorString(e));
        return 1;
    }
    return 0;
}

// Holds the stream until the GPU's clock has advanced `ns`: queued ahead of
// a batch, so that the host has queued the whole batch before it starts and
// the events time the GPU alone (as cg-launcher's time_queued does for ours).
__global__ void hold(unsigned long long ns) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
}

extern "C" int cub_setup(const float *x, int n) {
    count = n;
    if (check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream")) return 1;
    if (check(cudaMalloc(&d_in, sizeof(float) * (size_t)n), "malloc in")) return 1;
    if (check(cudaMalloc(&d_out, sizeof(float) * (size_t)n), "malloc out")) return 1;
    if (check(cudaMemcpy(d_in, x, sizeof(float) * (size_t)n, cudaMemcpyHostToDevice), "copy in")) return 1;
    cub::DeviceScan::InclusiveSum(nullptr, temp_bytes, d_in, d_out, n, stream);
    if (check(cudaMalloc(&d_temp, temp_bytes), "malloc temp")) return 1;
    return 0;
}

// Milliseconds of each of `runs` scans, by events around each, queued back
// to back behind a 5 ms hold.
extern "C" int cub_time(int runs, float *ms) {
    cudaEvent_t ev[2 * 64];
    if (runs > 64) return 1;
    for (int i = 0; i < 2 * runs; i++) cudaEventCreate(&ev[i]);
    hold<<<1, 1, 0, stream>>>(5000000ull);
    for (int i = 0; i < runs; i++) {
        cudaEventRecord(ev[2 * i], stream);
        cub::DeviceScan::InclusiveSum(d_temp, temp_bytes, d_in, d_out, count, stream);
        cudaEventRecord(ev[2 * i + 1], stream);
    }
    if (check(cudaStreamSynchronize(stream), "scan")) return 1;
    for (int i = 0; i < runs; i++) cudaEventElapsedTime(&ms[i], ev[2 * i], ev[2 * i + 1]);
    for (int i = 0; i < 2 * runs; i++) cudaEventDestroy(ev[i]);
    return 0;
}

extern "C" int cub_result(float *y) {
    return check(cudaMemcpy(y, d_out, sizeof(float) * (size_t)count, cudaMemcpyDeviceToHost), "copy out");
}

extern "C" void cub_teardown(void) {
    cudaFree(d_in);
    cudaFree(d_out);
    cudaFree(d_temp);
    cudaStreamDestroy(stream);
}
