// Thread block clusters on this GPU, measured: the cluster ceiling by cluster
// size and block size (cudaOccupancyMaxActiveClusters), where each cluster's
// blocks land (%smid), from which the GPCs follow (the blocks of one cluster
// share a GPC), what the driver says to each launch mistake, and what one
// cluster.sync() costs. The model behind the emulator's H200 clusters comes
// from this program's output.
//
// Build: nvcc -std=c++17 -O3 -arch=sm_90 -o probe probe.cu
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <numeric>
#include <set>
#include <vector>

namespace cg = cooperative_groups;

#define CHECK(call)                                                                               \
    do {                                                                                          \
        cudaError_t e_ = (call);                                                                  \
        if (e_ != cudaSuccess) {                                                                  \
            std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorName(e_)); \
            std::exit(1);                                                                         \
        }                                                                                         \
    } while (0)

__device__ __forceinline__ unsigned smid() {
    unsigned v;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(v));
    return v;
}

// Thread 0 of each block: its SM, its cluster's index and its rank in it.
__global__ void where(unsigned* out) {
    cg::cluster_group cluster = cg::this_cluster();
    if (threadIdx.x == 0) {
        unsigned b = blockIdx.x;
        out[3 * b] = smid();
        out[3 * b + 1] = blockIdx.x / cluster.num_blocks();
        out[3 * b + 2] = cluster.block_rank();
    }
}

// K cluster barriers.
__global__ void clusterSyncs(int k) {
    cg::cluster_group cluster = cg::this_cluster();
    for (int i = 0; i < k; ++i) cluster.sync();
}

static cudaLaunchConfig_t config(unsigned blocks, unsigned threads, size_t smem, unsigned cluster, bool cooperative, cudaLaunchAttribute* attrs) {
    cudaLaunchConfig_t c = {};
    c.gridDim = dim3(blocks);
    c.blockDim = dim3(threads);
    c.dynamicSmemBytes = smem;
    int k = 0;
    if (cluster) {
        attrs[k].id = cudaLaunchAttributeClusterDimension;
        attrs[k].val.clusterDim.x = cluster;
        attrs[k].val.clusterDim.y = 1;
        attrs[k].val.clusterDim.z = 1;
        ++k;
    }
    if (cooperative) {
        attrs[k].id = cudaLaunchAttributeCooperative;
        attrs[k].val.cooperative = 1;
        ++k;
    }
    c.attrs = attrs;
    c.numAttrs = k;
    return c;
}

static int maxClusters(const void* kernel, unsigned threads, size_t smem, unsigned cluster) {
    cudaLaunchAttribute attrs[2];
    cudaLaunchConfig_t c = config(cluster, threads, smem, cluster, false, attrs);
    int n = -1;
    cudaError_t e = cudaOccupancyMaxActiveClusters(&n, kernel, &c);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return -1;
    }
    return n;
}

int main() {
    setvbuf(stdout, nullptr, _IOLBF, 0);
    int sms;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("device %s, %d SMs, cc %d.%d\n", prop.name, sms, prop.major, prop.minor);
    CHECK(cudaFuncSetAttribute((void*)where, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    CHECK(cudaFuncSetAttribute((void*)clusterSyncs, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    CHECK(cudaFuncSetAttribute((void*)where, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));

    // 1. The ceiling: blocks per SM, and clusters of each size.
    std::printf("\nmax active clusters (blocks in them), kernel `where` with no dynamic shared memory\n%8s %6s", "threads", "b/SM");
    for (unsigned c = 1; c <= 16; ++c) std::printf(" %9u", c);
    std::printf("\n");
    for (unsigned t : {32u, 64u, 128u, 256u, 512u, 1024u}) {
        int per;
        CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, where, t, 0));
        std::printf("%8u %6d", t, per);
        for (unsigned c = 1; c <= 16; ++c) {
            int n = maxClusters((void*)where, t, 0, c);
            std::printf(" %4d(%4d)", n, n * (int)c);
        }
        std::printf("\n");
    }
    for (size_t smem : {size_t(100) * 1024, size_t(200) * 1024}) {
        std::printf("%8u %6s", 1024u, smem == 200 * 1024 ? "200K" : "100K");
        for (unsigned c = 1; c <= 16; ++c) std::printf(" %4d     ", maxClusters((void*)where, 1024, smem, c));
        std::printf("\n");
    }
    {
        cudaLaunchAttribute attrs[2];
        cudaLaunchConfig_t c = config(16, 256, 0, 0, false, attrs);
        int size = 0;
        CHECK(cudaOccupancyMaxPotentialClusterSize(&size, (void*)where, &c));
        std::printf("max potential cluster size (256 threads, non-portable allowed): %d\n", size);
    }

    // 2. Where clusters land: one block per SM (200 KiB of shared memory), clusters of 16,
    // then 8, 4 and 2; the SMs that share a cluster share a GPC.
    std::vector<int> parent(sms);
    std::iota(parent.begin(), parent.end(), 0);
    auto find = [&](int x) {
        while (parent[x] != x) x = parent[x] = parent[parent[x]];
        return x;
    };
    unsigned* out;
    CHECK(cudaMalloc(&out, 3 * 8192 * sizeof(unsigned)));
    for (unsigned c : {16u, 8u, 4u, 2u}) {
        for (size_t smem : {size_t(200) * 1024, size_t(0)}) {
            unsigned threads = smem ? 1024 : 256;
            int clusters = maxClusters((void*)where, threads, smem, c);
            if (clusters <= 0) {
                std::printf("clusters of %u, %zu B shared: none fit\n", c, smem);
                continue;
            }
            unsigned blocks = clusters * c;
            std::map<unsigned, int> perSm;
            for (int rep = 0; rep < 20; ++rep) {
                cudaLaunchAttribute attrs[2];
                cudaLaunchConfig_t cfg = config(blocks, threads, smem, c, false, attrs);
                CHECK(cudaMemset(out, 0xff, 3 * blocks * sizeof(unsigned)));
                CHECK(cudaLaunchKernelEx(&cfg, where, out));
                CHECK(cudaDeviceSynchronize());
                std::vector<unsigned> h(3 * blocks);
                CHECK(cudaMemcpy(h.data(), out, h.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
                for (unsigned b = 0; b < blocks; ++b) {
                    unsigned first = h[3 * (b - h[3 * b + 2])];
                    if (first < (unsigned)sms && h[3 * b] < (unsigned)sms) parent[find(h[3 * b])] = find(first);
                    if (rep == 0) perSm[h[3 * b]]++;
                }
                if (rep == 0 && c == 16 && smem) {
                    std::printf("clusters of 16, 1 block/SM: cluster -> SMs\n");
                    for (int k = 0; k < clusters; ++k) {
                        std::printf("  %2d:", k);
                        for (unsigned r = 0; r < c; ++r) std::printf(" %3u", h[3 * (k * c + r)]);
                        std::printf("\n");
                    }
                }
            }
            int most = 0, least = 1 << 30;
            for (int s = 0; s < sms; ++s) {
                most = std::max(most, perSm[s]);
                least = std::min(least, perSm[s]);
            }
            std::printf("clusters of %2u x %4u threads (%6zu B shared): %4d clusters, %5u blocks, blocks per SM %d-%d, SMs used %zu\n", c, threads, smem,
                        clusters, blocks, least, most, perSm.size());
        }
    }
    std::map<int, std::vector<int>> gpcs;
    for (int s = 0; s < sms; ++s) gpcs[find(s)].push_back(s);
    std::printf("\nGPCs found (SMs that shared a cluster): %zu\n", gpcs.size());
    for (auto& [root, list] : gpcs) {
        std::printf("  %2zu SMs:", list.size());
        for (int s : list) std::printf(" %d", s);
        std::printf("\n");
    }

    // 3. What the driver says to each mistake.
    auto tryLaunch = [&](const char* what, unsigned blocks, unsigned threads, unsigned c, bool coop, const void* kernel, void** args) {
        cudaLaunchAttribute attrs[2];
        cudaLaunchConfig_t cfg = config(blocks, threads, 0, c, coop, attrs);
        cudaError_t e = cudaLaunchKernelExC(&cfg, kernel, args);
        cudaError_t s = cudaDeviceSynchronize();
        std::printf("  %-58s launch: %s, sync: %s\n", what, cudaGetErrorName(e), cudaGetErrorName(s));
        cudaGetLastError();
    };
    int zero = 0;
    void* syncArgs[] = {&zero};
    std::printf("\nlaunches (kernel clusterSyncs, k = 0)\n");
    int c4 = maxClusters((void*)clusterSyncs, 256, 0, 4);
    int c2 = maxClusters((void*)clusterSyncs, 256, 0, 2);
    int perSm;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, clusterSyncs, 256, 0));
    std::printf("  clusterSyncs: %d blocks/SM x %d SMs = %d; clusters of 2: %d; of 4: %d\n", perSm, sms, perSm * sms, c2, c4);
    tryLaunch("cooperative, clusters of 4, the block ceiling", perSm * sms, 256, 4, true, (void*)clusterSyncs, syncArgs);
    tryLaunch("cooperative, clusters of 4, the cluster ceiling", c4 * 4, 256, 4, true, (void*)clusterSyncs, syncArgs);
    tryLaunch("cooperative, clusters of 4, one cluster more", c4 * 4 + 4, 256, 4, true, (void*)clusterSyncs, syncArgs);
    tryLaunch("clusters of 4, grid of 1054 (not a multiple)", 1054, 256, 4, false, (void*)clusterSyncs, syncArgs);
    tryLaunch("clusters of 3", 99, 256, 3, false, (void*)clusterSyncs, syncArgs);
    CHECK(cudaFuncSetAttribute((void*)clusterSyncs, cudaFuncAttributeNonPortableClusterSizeAllowed, 0));
    tryLaunch("clusters of 16, non-portable not allowed", 64, 256, 16, false, (void*)clusterSyncs, syncArgs);
    CHECK(cudaFuncSetAttribute((void*)clusterSyncs, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    tryLaunch("clusters of 16, non-portable allowed", 64, 256, 16, false, (void*)clusterSyncs, syncArgs);
    tryLaunch("clusters of 32, non-portable allowed", 64, 256, 32, false, (void*)clusterSyncs, syncArgs);
    tryLaunch("clusters of 16, 1024 threads", 64, 1024, 16, false, (void*)clusterSyncs, syncArgs);

    // 4. One cluster.sync(), by cluster size, the cluster ceiling at 256 threads.
    std::printf("\ncluster.sync() cost, K = 2000, (t(K) - t(0)) / K, median of 7\n");
    cudaEvent_t a, z;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&z));
    for (unsigned c : {1u, 2u, 4u, 8u, 16u}) {
        int clusters = maxClusters((void*)clusterSyncs, 256, 0, c);
        if (clusters <= 0) continue;
        std::vector<double> t0, tk;
        for (int r = 0; r < 8; ++r) {
            for (int k : {0, 2000}) {
                cudaLaunchAttribute attrs[2];
                cudaLaunchConfig_t cfg = config(clusters * c, 256, 0, c, false, attrs);
                CHECK(cudaEventRecord(a));
                CHECK(cudaLaunchKernelEx(&cfg, clusterSyncs, k));
                CHECK(cudaEventRecord(z));
                CHECK(cudaEventSynchronize(z));
                float ms;
                CHECK(cudaEventElapsedTime(&ms, a, z));
                if (r) (k ? tk : t0).push_back(ms);
            }
        }
        std::sort(t0.begin(), t0.end());
        std::sort(tk.begin(), tk.end());
        std::printf("  clusters of %2u, %4u blocks: %.4f us per cluster.sync()\n", c, clusters * c, (tk[3] - t0[3]) * 1e3 / 2000);
    }
    return 0;
}
