// The C++ cluster sum (host/cpp/cluster.cu) against the lesson's cooperative
// sum (host/cpp/lesson.cu): checked against a double sum, timed (median of
// 50 launches queued back to back, events around each), by cluster size, at
// the cluster ceiling of 256-thread blocks. n = 4,194,915 floats of the
// lesson's input.
//
// Build: nvcc -std=c++17 -O3 -arch=sm_90 -I../../../host/cpp -o sum sum.cu
#include "cluster.cu"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                                               \
    do {                                                                                          \
        cudaError_t e_ = (call);                                                                  \
        if (e_ != cudaSuccess) {                                                                  \
            std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorName(e_)); \
            std::exit(1);                                                                         \
        }                                                                                         \
    } while (0)

int main(int argc, char** argv) {
    size_t n = argc > 1 ? strtoull(argv[1], 0, 10) : 4194915;
    const unsigned threads = 256;
    std::vector<float> x(n);
    double ref = 0;
    for (size_t i = 0; i < n; ++i) {
        x[i] = 0.5f + float((i * 2654435761ull) % 1024) / 1024.0f;
        ref += x[i];
    }
    float *in, *partials, *out;
    CHECK(cudaMalloc(&in, n * sizeof(float)));
    CHECK(cudaMalloc(&partials, 8192 * sizeof(float)));
    CHECK(cudaMalloc(&out, 64 * sizeof(float)));
    CHECK(cudaMemcpy(in, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaFuncSetAttribute((void*)reduceClusterGrid, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    cudaEvent_t ev[102];
    for (auto& e : ev) CHECK(cudaEventCreate(&e));
    int sms, per;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    size_t smemCoop = oneFloatPerTile(threads), smemCluster = oneFloatPerTileAndTheBlockTotal(threads);
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, reduceCooperativeGrid, threads, smemCoop));
    std::printf("n = %zu, reference %.6f; reduceCooperativeGrid %d blocks/SM x %d SMs = %d\n", n, ref, per, sms, per * sms);

    auto run = [&](const char* label, const void* kernel, unsigned blocks, unsigned cluster, size_t smem) {
        cudaLaunchAttribute attrs[2];
        attrs[0].id = cudaLaunchAttributeCooperative;
        attrs[0].val.cooperative = 1;
        attrs[1].id = cudaLaunchAttributeClusterDimension;
        attrs[1].val.clusterDim.x = cluster;
        attrs[1].val.clusterDim.y = 1;
        attrs[1].val.clusterDim.z = 1;
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3(blocks);
        cfg.blockDim = dim3(threads);
        cfg.dynamicSmemBytes = smem;
        cfg.attrs = attrs;
        cfg.numAttrs = cluster ? 2 : 1;
        void* args[] = {&in, &partials, &out, &n};
        std::vector<float> totals;
        for (int w = 0; w < 10; ++w) CHECK(cudaLaunchKernelExC(&cfg, kernel, args));
        for (int r = 0; r < 50; ++r) {
            CHECK(cudaEventRecord(ev[2 * r]));
            CHECK(cudaLaunchKernelExC(&cfg, kernel, args));
            CHECK(cudaEventRecord(ev[2 * r + 1]));
        }
        CHECK(cudaDeviceSynchronize());
        std::vector<float> ms(50);
        for (int r = 0; r < 50; ++r) CHECK(cudaEventElapsedTime(&ms[r], ev[2 * r], ev[2 * r + 1]));
        std::sort(ms.begin(), ms.end());
        float total;
        CHECK(cudaMemcpy(&total, out, sizeof(float), cudaMemcpyDeviceToHost));
        std::printf("  %-28s %5u blocks  total %.6f  error %.2e  %.4f ms (min %.4f, max %.4f)\n", label, blocks, total, std::fabs(total - ref), ms[25],
                    ms[0], ms[49]);
    };
    run("cooperative", (void*)reduceCooperativeGrid, per * sms, 0, smemCoop);
    for (unsigned c : {1u, 2u, 4u, 8u, 16u}) {
        cudaLaunchAttribute attr;
        attr.id = cudaLaunchAttributeClusterDimension;
        attr.val.clusterDim.x = c;
        attr.val.clusterDim.y = 1;
        attr.val.clusterDim.z = 1;
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3(c);
        cfg.blockDim = dim3(threads);
        cfg.dynamicSmemBytes = smemCluster;
        cfg.attrs = &attr;
        cfg.numAttrs = 1;
        int clusters = 0;
        CHECK(cudaOccupancyMaxActiveClusters(&clusters, (void*)reduceClusterGrid, &cfg));
        char label[64];
        std::snprintf(label, sizeof label, "cluster sum, clusters of %u", c);
        run(label, (void*)reduceClusterGrid, clusters * c, c, smemCluster);
    }
    return 0;
}
