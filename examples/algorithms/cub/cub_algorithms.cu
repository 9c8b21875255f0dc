// CUB's DeviceReduce::Sum, DeviceScan::InclusiveSum and ExclusiveSum,
// DeviceSelect::If (x > 0), DeviceHistogram::HistogramEven (256 bins of
// bytes), DeviceRunLengthEncode::Encode, and DeviceRadixSort::SortKeys
// (unsigned, unsigned long long and float keys) and SortPairs (unsigned
// keys and values), each on the same input as cg-algorithms' call, timed
// with CUDA events on its own stream: the baselines of `algorithms
// --bench`. Built by nvcc at run time into a shared library.
#include <cub/cub.cuh>
#include <cuda_runtime.h>
#include <cstdio>

enum { REDUCE = 0, INCLUSIVE = 1, EXCLUSIVE = 2, SELECT = 3, HISTOGRAM = 4, RUN_LENGTH = 5, SORT_KEYS = 6, SORT_PAIRS = 7, SORT_KEYS_U64 = 8, SORT_KEYS_F32 = 9 };

static int algo = 0, count = 0, begin_bit = 0, end_bit = 0;
static void *d_in = nullptr, *d_out = nullptr, *d_temp = nullptr;
static unsigned *d_values_in = nullptr, *d_values_out = nullptr;
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
    // The sorts' simple forms, as cg-algorithms' sort_keys and sort_pairs:
    // the input left as it was, the output in d_out; by begin_bit..end_bit
    // (every bit where end_bit is 0).
    case SORT_KEYS:
        cub::DeviceRadixSort::SortKeys(temp, temp_bytes, (const unsigned *)d_in, (unsigned *)d_out, count, begin_bit, end_bit ? end_bit : 32, stream);
        break;
    case SORT_PAIRS:
        cub::DeviceRadixSort::SortPairs(temp, temp_bytes, (const unsigned *)d_in, (unsigned *)d_out, d_values_in, d_values_out, count, begin_bit,
                                        end_bit ? end_bit : 32, stream);
        break;
    case SORT_KEYS_U64:
        cub::DeviceRadixSort::SortKeys(temp, temp_bytes, (const unsigned long long *)d_in, (unsigned long long *)d_out, count, begin_bit,
                                       end_bit ? end_bit : 64, stream);
        break;
    case SORT_KEYS_F32:
        cub::DeviceRadixSort::SortKeys(temp, temp_bytes, (const float *)d_in, (float *)d_out, count, begin_bit, end_bit ? end_bit : 32, stream);
        break;
    }
}

// Bytes of one element of algo `a`'s input (and output): a byte for the
// histogram, 8 for u64 keys, else 4.
static size_t element_bytes(int a) { return a == HISTOGRAM ? 1 : a == SORT_KEYS_U64 ? 8 : 4; }

// `x` holds n floats, n bytes for the histogram, n keys for a sort (then
// n unsigned values for SortPairs). `a` is the algorithm, and for a sort
// its begin_bit in bits 8-15 and end_bit in bits 16-23 (0: every bit).
extern "C" int cub_setup(int a, const void *x, int n) {
    algo = a & 0xff;
    begin_bit = (a >> 8) & 0xff;
    end_bit = (a >> 16) & 0xff;
    a = algo;
    count = n;
    size_t in_bytes = element_bytes(a) * (size_t)n;
    size_t out_bytes = a == HISTOGRAM ? 256 * sizeof(unsigned) : element_bytes(a) * (size_t)n;
    if (check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream")) return 1;
    if (check(cudaMalloc(&d_in, in_bytes), "malloc in")) return 1;
    if (check(cudaMalloc(&d_out, out_bytes), "malloc out")) return 1;
    if (check(cudaMalloc(&d_count, sizeof(int)), "malloc count")) return 1;
    if (check(cudaMalloc(&d_lengths, sizeof(int) * (size_t)n), "malloc lengths")) return 1;
    if (check(cudaMemcpy(d_in, x, in_bytes, cudaMemcpyHostToDevice), "copy in")) return 1;
    if (a == SORT_PAIRS) {
        if (check(cudaMalloc(&d_values_in, sizeof(unsigned) * (size_t)n), "malloc values in")) return 1;
        if (check(cudaMalloc(&d_values_out, sizeof(unsigned) * (size_t)n), "malloc values out")) return 1;
        if (check(cudaMemcpy(d_values_in, (const char *)x + in_bytes, sizeof(unsigned) * (size_t)n, cudaMemcpyHostToDevice), "copy values in")) return 1;
    }
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

// The output (`len` elements of 4 bytes, of 8 for u64 keys; for the
// run-length encoding, the values then the lengths, 2 len; for SortPairs,
// the keys then the values) and, for the selection and the encoding, the
// count.
extern "C" int cub_result(void *out, int len, int *selected) {
    if (check(cudaMemcpy(selected, d_count, sizeof(int), cudaMemcpyDeviceToHost), "copy count")) return 1;
    size_t bytes = (algo == HISTOGRAM ? 4 : element_bytes(algo)) * (size_t)len;
    if (check(cudaMemcpy(out, d_out, bytes, cudaMemcpyDeviceToHost), "copy out")) return 1;
    if (algo == SORT_PAIRS) return check(cudaMemcpy((char *)out + bytes, d_values_out, 4 * (size_t)len, cudaMemcpyDeviceToHost), "copy values");
    if (algo != RUN_LENGTH) return 0;
    return check(cudaMemcpy((char *)out + 4 * (size_t)len, d_lengths, 4 * (size_t)len, cudaMemcpyDeviceToHost), "copy lengths");
}

extern "C" void cub_teardown(void) {
    cudaFree(d_in);
    cudaFree(d_out);
    cudaFree(d_count);
    cudaFree(d_lengths);
    cudaFree(d_temp);
    cudaFree(d_values_in);
    cudaFree(d_values_out);
    d_values_in = d_values_out = nullptr;
    cudaStreamDestroy(stream);
}
