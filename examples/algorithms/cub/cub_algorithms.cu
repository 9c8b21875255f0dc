// CUB's DeviceReduce::Sum, DeviceScan::InclusiveSum and ExclusiveSum,
// DeviceSelect::If (x > 0), DeviceHistogram::HistogramEven (256 bins of
// bytes) and DeviceRunLengthEncode::Encode, each on the same input as
// cg-algorithms' call, timed with CUDA
// events on its own stream: the baselines of `algorithms --bench`. Built
// by nvcc at run time into a shared library.
#include <cub/cub.cuh>
#include <cuda_runtime.h>
#include <cstdio>

enum { REDUCE = 0, INCLUSIVE = 1, EXCLUSIVE = 2, SELECT = 3, HISTOGRAM = 4, RUN_LENGTH = 5 };

static int algo = 0, count = 0;
static void *d_in = nullptr, *d_out = nullptr, *d_temp = nullptr;
static int *d_count = nullptr, *d_lengths = nullptr;
static size_t temp_bytes = 0;
static cudaStream_t stream;

struct Positive {
    __device__ bool operator()(const float &x) const { return x > 0.0f; }
};

static int check(cudaError_t e, const char *what) {
    if (e != cudaSuccess) {
        fprintf(stderr, "cub_algorithms: %s: %s\n", what, cudaGetErrorString(e));
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

static void run(void *temp) {
    float *in = (float *)d_in, *out = (float *)d_out;
    switch (algo) {
    case REDUCE: cub::DeviceReduce::Sum(temp, temp_bytes, in, out, count, stream); break;
    case INCLUSIVE: cub::DeviceScan::InclusiveSum(temp, temp_bytes, in, out, count, stream); break;
    case EXCLUSIVE: cub::DeviceScan::ExclusiveSum(temp, temp_bytes, in, out, count, stream); break;
    case SELECT: cub::DeviceSelect::If(temp, temp_bytes, in, out, d_count, count, Positive(), stream); break;
    case HISTOGRAM:
        cub::DeviceHistogram::HistogramEven(temp, temp_bytes, (const unsigned char *)d_in, (unsigned int *)d_out, 257, 0, 256, count, stream);
        break;
    case RUN_LENGTH: cub::DeviceRunLengthEncode::Encode(temp, temp_bytes, in, out, d_lengths, d_count, count, stream); break;
    }
}

// `x` holds n floats, or n bytes for the histogram.
extern "C" int cub_setup(int a, const void *x, int n) {
    algo = a;
    count = n;
    size_t in_bytes = a == HISTOGRAM ? (size_t)n : sizeof(float) * (size_t)n;
    size_t out_bytes = a == HISTOGRAM ? 256 * sizeof(unsigned) : sizeof(float) * (size_t)n;
    if (check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream")) return 1;
    if (check(cudaMalloc(&d_in, in_bytes), "malloc in")) return 1;
    if (check(cudaMalloc(&d_out, out_bytes), "malloc out")) return 1;
    if (check(cudaMalloc(&d_count, sizeof(int)), "malloc count")) return 1;
    if (check(cudaMalloc(&d_lengths, sizeof(int) * (size_t)n), "malloc lengths")) return 1;
    if (check(cudaMemcpy(d_in, x, in_bytes, cudaMemcpyHostToDevice), "copy in")) return 1;
    temp_bytes = 0;
    run(nullptr);
    if (check(cudaMalloc(&d_temp, temp_bytes < 1 ? 1 : temp_bytes), "malloc temp")) return 1;
    return 0;
}

// Milliseconds of each of `runs` calls, by events around each, queued back
// to back behind a 5 ms hold.
extern "C" int cub_time(int runs, float *ms) {
    cudaEvent_t ev[2 * 64];
    if (runs > 64) return 1;
    for (int i = 0; i < 2 * runs; i++) cudaEventCreate(&ev[i]);
    hold<<<1, 1, 0, stream>>>(5000000ull);
    for (int i = 0; i < runs; i++) {
        cudaEventRecord(ev[2 * i], stream);
        run(d_temp);
        cudaEventRecord(ev[2 * i + 1], stream);
    }
    if (check(cudaStreamSynchronize(stream), "run")) return 1;
    for (int i = 0; i < runs; i++) cudaEventElapsedTime(&ms[i], ev[2 * i], ev[2 * i + 1]);
    for (int i = 0; i < 2 * runs; i++) cudaEventDestroy(ev[i]);
    return 0;
}

// The output (`len` elements of 4 bytes; for the run-length encoding, the
// values then the lengths, 2 len) and, for the selection and the encoding,
// the count.
extern "C" int cub_result(void *out, int len, int *selected) {
    if (check(cudaMemcpy(selected, d_count, sizeof(int), cudaMemcpyDeviceToHost), "copy count")) return 1;
    if (check(cudaMemcpy(out, d_out, 4 * (size_t)len, cudaMemcpyDeviceToHost), "copy out")) return 1;
    if (algo != RUN_LENGTH) return 0;
    return check(cudaMemcpy((char *)out + 4 * (size_t)len, d_lengths, 4 * (size_t)len, cudaMemcpyDeviceToHost), "copy lengths");
}

extern "C" void cub_teardown(void) {
    cudaFree(d_in);
    cudaFree(d_out);
    cudaFree(d_count);
    cudaFree(d_lengths);
    cudaFree(d_temp);
    cudaStreamDestroy(stream);
}
