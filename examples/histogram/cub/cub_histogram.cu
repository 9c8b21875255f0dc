// CUB's DeviceHistogram::HistogramEven, 256 bins of bytes, on the same
// input, timed with CUDA events on its own stream: the baseline the
// histogram in one cooperative launch is measured against. Built by nvcc
// at run time into a shared library (`histogram --bench`).
#include <cub/device/device_histogram.cuh>
#include <cuda_runtime.h>
#include <cstdio>

static unsigned char *d_in = nullptr;
static unsigned int *d_bins = nullptr;
static void *d_temp = nullptr;
static size_t temp_bytes = 0;
static int count = 0;
static cudaStream_t stream;

static int check(cudaError_t e, const char *what) {
    if (e != cudaSuccess) {
        fprintf(stderr, "cub_histogram: %s: %s\n", what, cudaGetErrorString(e));
        return 1;
    }
    return 0;
}

// Holds the stream until the GPU's clock has advanced `ns` (as
// cg-launcher's time_queued does for ours).
__global__ void hold(unsigned long long ns) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
}

static cudaError_t histogram(void *temp, size_t &bytes) {
    // 257 levels from 0 to 256: one bin per byte value.
    return cub::DeviceHistogram::HistogramEven(temp, bytes, d_in, d_bins, 257, 0, 256, count, stream);
}

extern "C" int cub_setup(const unsigned char *x, int n) {
    count = n;
    if (check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream")) return 1;
    if (check(cudaMalloc(&d_in, (size_t)n), "malloc in")) return 1;
    if (check(cudaMalloc(&d_bins, 256 * sizeof(unsigned int)), "malloc bins")) return 1;
    if (check(cudaMemcpy(d_in, x, (size_t)n, cudaMemcpyHostToDevice), "copy in")) return 1;
    if (check(histogram(nullptr, temp_bytes), "size temp")) return 1;
    if (check(cudaMalloc(&d_temp, temp_bytes), "malloc temp")) return 1;
    return 0;
}

// Milliseconds of each of `runs` histograms, by events around each, queued
// back to back behind a 5 ms hold.
extern "C" int cub_time(int runs, float *ms) {
    cudaEvent_t ev[2 * 64];
    if (runs > 64) return 1;
    for (int i = 0; i < 2 * runs; i++) cudaEventCreate(&ev[i]);
    hold<<<1, 1, 0, stream>>>(5000000ull);
    for (int i = 0; i < runs; i++) {
        cudaEventRecord(ev[2 * i], stream);
        histogram(d_temp, temp_bytes);
        cudaEventRecord(ev[2 * i + 1], stream);
    }
    if (check(cudaStreamSynchronize(stream), "histogram")) return 1;
    for (int i = 0; i < runs; i++) cudaEventElapsedTime(&ms[i], ev[2 * i], ev[2 * i + 1]);
    for (int i = 0; i < 2 * runs; i++) cudaEventDestroy(ev[i]);
    return 0;
}

extern "C" int cub_result(unsigned int *bins) {
    return check(cudaMemcpy(bins, d_bins, 256 * sizeof(unsigned int), cudaMemcpyDeviceToHost), "copy out");
}

extern "C" void cub_teardown(void) {
    cudaFree(d_in);
    cudaFree(d_bins);
    cudaFree(d_temp);
    cudaStreamDestroy(stream);
}
