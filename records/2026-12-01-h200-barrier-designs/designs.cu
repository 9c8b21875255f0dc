// Grid-barrier designs, timed side by side on one GPU: what one barrier costs
// by grid size, for NVIDIA's cg::this_grid().sync(), this project's barrier
// as it was on 2026-12-01 (the driver's word, acquire-release arrival, the
// last arriver not polling), and the designs the barrier issue (#30) listed
// as untried. Every design is also run with a data check between barriers
// (block b writes, block b+1 reads after the barrier), so a design that is
// fast because it is wrong shows.
//
// Per-barrier cost: one cooperative launch of K barriers back to back and one
// of 0, each timed with events; (median t(K) - median t(0)) / K, the designs
// interleaved round by round. Kernel boundary: K empty launches of the same
// grid queued back to back, and K kernel nodes of one graph, per launch.
//
// Build: nvcc -std=c++17 -O3 -arch=sm_90 -o designs designs.cu
// Run:   ./designs [K] [ROUNDS] [CHECK_BARRIERS] [all|new] [BLOCKSxTHREADS,...]
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
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

// ---- instructions (the same PTX the Rust barrier emits) -------------------
__device__ __forceinline__ unsigned atomAddAcqRel(unsigned* p, unsigned v) {
    unsigned old;
    asm volatile("atom.add.acq_rel.gpu.u32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
    return old;
}
__device__ __forceinline__ unsigned atomAddRelease(unsigned* p, unsigned v) {
    unsigned old;
    asm volatile("atom.add.release.gpu.u32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
    return old;
}
__device__ __forceinline__ void redAddRelease(unsigned* p, unsigned v) {
    asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ unsigned ldAcquire(const unsigned* p) {
    unsigned v;
    asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ unsigned ldRelaxed(const unsigned* p) {
    unsigned v;
    asm volatile("ld.relaxed.gpu.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void stRelease(unsigned* p, unsigned v) {
    asm volatile("st.release.gpu.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ void stRelaxed(unsigned* p, unsigned v) {
    asm volatile("st.relaxed.gpu.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ void fenceAcqRel() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }
__device__ __forceinline__ unsigned* driverWord() {
    unsigned hi, lo;
    asm volatile("mov.u32 %0, %%envreg1;" : "=r"(hi));
    asm volatile("mov.u32 %0, %%envreg2;" : "=r"(lo));
    return reinterpret_cast<unsigned*>((static_cast<unsigned long long>(hi) << 32) | lo) + 1;
}

constexpr unsigned kFlip = 0x80000000u;
// kRedAllPoll spins at most kMaxSpins times per poll, and counts the polls it
// gave up on in its region's line kGaveUpLine (a hang shows as a count).
constexpr unsigned kMaxSpins = 1u << 20, kGaveUpLine = 255;
// One 128-byte line per word, so that words sit in different L2 lines.
constexpr unsigned kLine = 32;

// Our own barrier memory: zeroed once, kept across launches.
struct State {
    unsigned* words;  // counters, the top word and the flags, each on its own line
};

enum Design : int {
    kNvidia = 0,      // cg::this_grid().sync()
    kOurs,            // the driver's word: acq_rel add, last arriver skips the poll, ld.acquire poll
    kOursRelaxedPoll, // the same, polling relaxed, one fence after
    kFlatFlags,       // one counter; the last arriver releases R flag lines; each block polls one
    kTreeTopPoll,     // C group counters; group last arrivers add to a top word (flip); all poll the top word
    kTreeFlags,       // C group counters, top counter; the last writes C flag lines; groups poll their own
    kRedWatcher,      // fire-and-forget red arrivals on C counters; block 0's lanes watch them, then write C flags
    kDissemination,   // log2(n) rounds, each block signals one partner and waits for another
    kRedAllPoll,      // red arrivals on C counters, each growing by kFlip per barrier; every block's warp polls all C
    kDesigns
};

// The barrier, for thread 0 of each block (designs that need a warp use warp 0).
template <int D>
__device__ __forceinline__ void barrierArrive(State s, unsigned groups, unsigned flags, unsigned& parity) {
    const unsigned b = blockIdx.x, n = gridDim.x;
    const unsigned lane = threadIdx.x;  // only warp 0 calls this
    if (D == kOurs || D == kOursRelaxedPoll) {
        if (lane == 0) {
            unsigned* w = driverWord();
            unsigned share = b == 0 ? kFlip - (n - 1) : 1;
            unsigned old = atomAddAcqRel(w, share);
            if (((old ^ (old + share)) & kFlip) == 0) {
                if (D == kOurs) {
                    while (((old ^ ldAcquire(w)) & kFlip) == 0) {}
                } else {
                    while (((old ^ ldRelaxed(w)) & kFlip) == 0) {}
                    fenceAcqRel();
                }
            }
        }
    } else if (D == kFlatFlags) {
        unsigned* counter = s.words;
        unsigned* flag = s.words + kLine * (1 + b % flags);
        unsigned epoch = 0, last = 0;
        if (lane == 0) {
            epoch = ldRelaxed(flag);
            unsigned old = atomAddAcqRel(counter, 1);
            last = old == n - 1;
            if (last) stRelaxed(counter, 0);
        }
        last = __shfl_sync(0xffffffff, last, 0);
        epoch = __shfl_sync(0xffffffff, epoch, 0);
        // Lane 0's acquire and reset happen before the other lanes' releases.
        __syncwarp();
        if (last) {
            for (unsigned f = lane; f < flags; f += 32) stRelease(s.words + kLine * (1 + f), epoch + 1);
        } else if (lane == 0) {
            while (ldRelaxed(flag) == epoch) {}
            fenceAcqRel();
        }
    } else if (D == kTreeTopPoll) {
        const unsigned g = b % groups;
        const unsigned size = n / groups + (g < n % groups ? 1 : 0);
        unsigned* counter = s.words + kLine * g;
        unsigned* top = s.words + kLine * groups;
        if (lane == 0) {
            unsigned start = ldRelaxed(top);
            unsigned old = atomAddAcqRel(counter, 1);
            bool polls = true;
            if (old == size - 1) {
                stRelaxed(counter, 0);
                unsigned share = g == 0 ? kFlip - (groups - 1) : 1;
                unsigned t = atomAddAcqRel(top, share);
                polls = ((t ^ (t + share)) & kFlip) == 0;
                start = t;
            }
            if (polls) {
                while (((start ^ ldRelaxed(top)) & kFlip) == 0) {}
                fenceAcqRel();
            }
        }
    } else if (D == kTreeFlags) {
        const unsigned g = b % groups;
        const unsigned size = n / groups + (g < n % groups ? 1 : 0);
        unsigned* counter = s.words + kLine * g;
        unsigned* top = s.words + kLine * groups;
        unsigned* flag = s.words + kLine * (groups + 1 + g);
        unsigned epoch = 0, last = 0;
        if (lane == 0) {
            epoch = ldRelaxed(flag);
            unsigned old = atomAddAcqRel(counter, 1);
            if (old == size - 1) {
                stRelaxed(counter, 0);
                unsigned t = atomAddAcqRel(top, 1);
                last = t == groups - 1;
                if (last) stRelaxed(top, 0);
            }
        }
        last = __shfl_sync(0xffffffff, last, 0);
        epoch = __shfl_sync(0xffffffff, epoch, 0);
        // Lane 0's acquire and reset happen before the other lanes' releases.
        __syncwarp();
        if (last) {
            for (unsigned f = lane; f < groups; f += 32) stRelease(s.words + kLine * (groups + 1 + f), epoch + 1);
        } else if (lane == 0) {
            while (ldRelaxed(flag) == epoch) {}
            fenceAcqRel();
        }
    } else if (D == kRedWatcher) {
        const unsigned g = b % groups;
        unsigned* flag = s.words + kLine * (groups + 1 + g);
        unsigned epoch = 0;
        if (lane == 0) {
            epoch = ldRelaxed(flag);
            redAddRelease(s.words + kLine * g, 1);
        }
        if (b == 0) {
            epoch = __shfl_sync(0xffffffff, epoch, 0);
            // Lane f watches counter f until its group has all arrived, then resets it.
            for (unsigned f = lane; f < groups; f += 32) {
                const unsigned size = n / groups + (f < n % groups ? 1 : 0);
                while (ldRelaxed(s.words + kLine * f) != size) {}
                stRelaxed(s.words + kLine * f, 0);
            }
            fenceAcqRel();
            __syncwarp();
            for (unsigned f = lane; f < groups; f += 32) stRelease(s.words + kLine * (groups + 1 + f), epoch + 1);
        } else if (lane == 0) {
            while (ldRelaxed(flag) == epoch) {}
            fenceAcqRel();
        }
    } else if (D == kRedAllPoll) {
        // Counter g's members add kFlip in all (the first member kFlip - (size - 1), the others 1),
        // so its top bit flips exactly when its group has all arrived, and every counter's top bit
        // is the same between barriers (needs n >= C). flags: 0 parity kept in a register, 1 parity
        // read from the own counter before arriving, 2 parity from an atomic add's old value;
        // + 4: lane 0 polls its own counter before the warp polls all.
        // A block that gave up once (bit 0 of its parity) stops waiting for the rest of the launch.
        if (__shfl_sync(0xffffffff, parity & 1, 0)) return;
        const unsigned c = groups, g = b % c, mode = flags & 3;
        const unsigned size = n / c + (g < n % c ? 1 : 0);
        unsigned* mine = s.words + kLine * g;
        const unsigned share = b < c ? kFlip - (size - 1) : 1;
        unsigned p = 0;
        if (lane == 0) {
            if (mode == 0) {
                p = parity;
                redAddRelease(mine, share);
            } else if (mode == 1) {
                p = ldRelaxed(mine) & kFlip;
                redAddRelease(mine, share);
            } else {
                p = atomAddRelease(mine, share) & kFlip;
            }
            if (flags & 4)
                for (unsigned spins = 0; ((ldAcquire(mine) ^ p) & kFlip) == 0;)
                    if (++spins == kMaxSpins) {
                        atomicAdd(s.words + kLine * kGaveUpLine, 1);
                        p |= 1;
                        break;
                    }
        }
        p = __shfl_sync(0xffffffff, p, 0);
        for (unsigned spins = 0; !__all_sync(0xffffffff, lane >= c || ((ldAcquire(s.words + kLine * lane) ^ p) & kFlip) != 0);)
            if (++spins == kMaxSpins) {
                if (lane == 0) atomicAdd(s.words + kLine * kGaveUpLine, 1);
                p |= 1;
                break;
            }
        parity = p ^ kFlip;
    } else if (D == kDissemination) {
        // flags: n words per round, each on its own line would be too many; pack 1 per 32 B.
        if (lane == 0) {
            unsigned rounds = 0;
            while ((1u << rounds) < n) ++rounds;
            unsigned* base = s.words;
            unsigned epoch = ldRelaxed(base + 8 * (b * 16 + 15)) + 1;
            for (unsigned r = 0; r < rounds; ++r) {
                unsigned partner = (b + (1u << r)) % n;
                stRelease(base + 8 * (partner * 16 + r), epoch);
                while (ldAcquire(base + 8 * (b * 16 + r)) < epoch) {}
            }
            stRelaxed(base + 8 * (b * 16 + 15), epoch);
        }
    }
}

template <int D>
__device__ __forceinline__ void gridBarrier(State s, unsigned groups, unsigned flags, unsigned& parity) {
    if (D == kNvidia) {
        cg::this_grid().sync();
        return;
    }
    __syncthreads();
    if (threadIdx.x < 32) barrierArrive<D>(s, groups, flags, parity);
    __syncthreads();
}

// K barriers; with check, block b writes a value before each that block b+1
// reads after it (two buffers, so a write never races the previous read).
template <int D>
__global__ void barriers(State s, unsigned groups, unsigned flags, int k, int check, unsigned* data, unsigned* errors) {
    const unsigned b = blockIdx.x, n = gridDim.x;
    const unsigned writer = blockDim.x - 1, reader = blockDim.x / 2;
    // Before this block's first arrival its own counter cannot have completed a barrier of this launch.
    unsigned parity = D == kRedAllPoll && threadIdx.x == 0 ? ldRelaxed(s.words + kLine * (b % groups)) & kFlip : 0;
    for (int i = 0; i < k; ++i) {
        unsigned* buf = data + (i & 1) * n;
        if (check && threadIdx.x == writer) buf[b] = i + 1;
        gridBarrier<D>(s, groups, flags, parity);
        if (check && threadIdx.x == reader && ((volatile unsigned*)buf)[(b + 1) % n] != unsigned(i + 1)) atomicAdd(errors, 1);
    }
}

__global__ void empty() {}

typedef void (*Kernel)(State, unsigned, unsigned, int, int, unsigned*, unsigned*);
static Kernel kernelOf(int d) {
    switch (d) {
        case kNvidia: return barriers<kNvidia>;
        case kOurs: return barriers<kOurs>;
        case kOursRelaxedPoll: return barriers<kOursRelaxedPoll>;
        case kFlatFlags: return barriers<kFlatFlags>;
        case kTreeTopPoll: return barriers<kTreeTopPoll>;
        case kTreeFlags: return barriers<kTreeFlags>;
        case kRedWatcher: return barriers<kRedWatcher>;
        case kRedAllPoll: return barriers<kRedAllPoll>;
        default: return barriers<kDissemination>;
    }
}

struct Variant {
    int design;
    unsigned groups, flags;
    std::string label;
    size_t region = 0;  // words from the start of the barrier memory: each variant has its own
};

static float launch(const Variant& v, State s, unsigned blocks, unsigned threads, int k, int check, unsigned* data, unsigned* errors,
                    cudaEvent_t a, cudaEvent_t z) {
    Kernel kern = kernelOf(v.design);
    s.words += v.region;
    unsigned groups = v.groups, flags = v.flags;
    int kk = k, ch = check;
    void* args[] = {&s, &groups, &flags, &kk, &ch, &data, &errors};
    CHECK(cudaEventRecord(a));
    CHECK(cudaLaunchCooperativeKernel((void*)kern, blocks, threads, args, 0, 0));
    CHECK(cudaEventRecord(z));
    CHECK(cudaEventSynchronize(z));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, a, z));
    return ms;
}

static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

int main(int argc, char** argv) {
    int K = argc > 1 ? atoi(argv[1]) : 2000;
    int rounds = argc > 2 ? atoi(argv[2]) : 7;
    int checkK = argc > 3 ? atoi(argv[3]) : 20000;
    int sms;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    int driver;
    CHECK(cudaDriverGetVersion(&driver));
    std::printf("device %s, %d SMs, driver API %d; K = %d barriers per launch, %d rounds, check %d barriers\n", prop.name, sms, driver, K, rounds,
                checkK);

    std::vector<Variant> variants = {{kNvidia, 1, 1, "nvidia cg"}, {kOurs, 1, 1, "ours (2026-12-01)"}, {kOursRelaxedPoll, 1, 1, "ours, relaxed poll"}};
    for (unsigned r : {8u, 32u}) variants.push_back({kFlatFlags, 1, r, "flat + " + std::to_string(r) + " flags"});
    for (unsigned c : {8u, 16u, 32u}) variants.push_back({kTreeTopPoll, c, 1, "tree " + std::to_string(c) + ", poll top"});
    for (unsigned c : {8u, 16u, 32u, 64u}) variants.push_back({kTreeFlags, c, c, "tree " + std::to_string(c) + " + flags"});
    for (unsigned c : {16u, 32u}) variants.push_back({kRedWatcher, c, c, "red " + std::to_string(c) + " + watcher"});
    variants.push_back({kDissemination, 1, 1, "dissemination"});
    if (argc > 4 && std::strcmp(argv[4], "all") != 0) variants.resize(2);  // "new": NVIDIA's and ours beside the designs below
    const char* modes[] = {"register", "read own", "atom own"};
    for (unsigned c : {1u, 8u, 32u}) variants.push_back({kRedAllPoll, c, 0, "red " + std::to_string(c) + ", all poll"});
    for (unsigned m : {1u, 2u}) variants.push_back({kRedAllPoll, 32, m, std::string("red 32, all poll, ") + modes[m]});
    for (unsigned c : {8u, 32u}) variants.push_back({kRedAllPoll, c, 4, "red " + std::to_string(c) + ", own then all"});
    variants.push_back({kRedAllPoll, 32, 5, "red 32, own then all, read own"});

    for (size_t v = 0; v < variants.size(); ++v) variants[v].region = v * (3u << 20) / sizeof(unsigned);
    State s;
    CHECK(cudaMalloc(&s.words, 96 << 20));
    setvbuf(stdout, nullptr, _IOLBF, 0);
    unsigned *data, *errors;
    CHECK(cudaMalloc(&data, 2 * 65536 * sizeof(unsigned)));
    CHECK(cudaMalloc(&errors, sizeof(unsigned)));
    cudaEvent_t a, z;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&z));

    struct Config {
        unsigned threads, perSm;
    };
    std::vector<std::pair<unsigned, unsigned>> configs;  // (threads, blocks)
    if (argc > 5) {  // e.g. 1056x256,4224x32
        for (char* t = std::strtok(argv[5], ","); t; t = std::strtok(nullptr, ",")) {
            unsigned b, th;
            if (std::sscanf(t, "%ux%u", &b, &th) == 2) configs.push_back({th, b});
        }
    } else {
        for (unsigned per : {1u, 2u, 4u, 6u, 8u}) configs.push_back({256, per * sms});
        for (unsigned per : {1u, 2u}) configs.push_back({1024, per * sms});
        for (unsigned per : {16u, 32u}) configs.push_back({32, per * sms});
    }

    for (auto [threads, blocks] : configs) {
        std::vector<std::vector<double>> t0(variants.size()), tk(variants.size());
        std::vector<bool> ok(variants.size(), true);
        for (size_t v = 0; v < variants.size(); ++v) {
            int per;
            CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, kernelOf(variants[v].design), threads, 0));
            if ((unsigned)per * sms < blocks) ok[v] = false;
            if (variants[v].design == kDissemination && blocks > 4096) ok[v] = false;
        }
        CHECK(cudaMemset(s.words, 0, 96 << 20));
        for (size_t v = 0; v < variants.size(); ++v)
            if (ok[v]) launch(variants[v], s, blocks, threads, 10, 0, data, errors, a, z);  // warm-up
        for (int r = 0; r < rounds; ++r) {
            for (size_t v = 0; v < variants.size(); ++v) {
                size_t vv = r % 2 ? variants.size() - 1 - v : v;
                if (!ok[vv]) continue;
                t0[vv].push_back(launch(variants[vv], s, blocks, threads, 0, 0, data, errors, a, z));
                tk[vv].push_back(launch(variants[vv], s, blocks, threads, K, 0, data, errors, a, z));
            }
        }
        std::printf("\n%u blocks x %u threads\n", blocks, threads);
        double nvidia = 0;
        for (size_t v = 0; v < variants.size(); ++v) {
            if (!ok[v]) {
                std::printf("  %-22s  does not fit\n", variants[v].label.c_str());
                continue;
            }
            double us = (median(tk[v]) - median(t0[v])) * 1e3 / K;
            std::vector<double> per;
            for (size_t i = 0; i < tk[v].size(); ++i) per.push_back((tk[v][i] - t0[v][i]) * 1e3 / K);
            double lo = *std::min_element(per.begin(), per.end()), hi = *std::max_element(per.begin(), per.end());
            if (v == 0) nvidia = us;
            CHECK(cudaMemset(errors, 0, sizeof(unsigned)));
            CHECK(cudaMemset(data, 0, 2 * 65536 * sizeof(unsigned)));
            launch(variants[v], s, blocks, threads, checkK, 1, data, errors, a, z);
            unsigned errs, gaveUp;
            CHECK(cudaMemcpy(&errs, errors, sizeof(unsigned), cudaMemcpyDeviceToHost));
            CHECK(cudaMemcpy(&gaveUp, s.words + variants[v].region + kLine * kGaveUpLine, sizeof(unsigned), cudaMemcpyDeviceToHost));
            if (gaveUp) std::printf("  %-22s  GAVE UP %u polls (a hang without the spin limit)\n", variants[v].label.c_str(), gaveUp);
            std::printf("  %-22s  %7.3f us/barrier  (rounds %6.3f-%6.3f)  x%5.3f of nvidia   check: %u errors in %d barriers\n", variants[v].label.c_str(),
                        us, lo, hi, us / nvidia, errs, checkK);
            std::printf("RESULT %u %u \"%s\" %.4f %.4f %.4f %u\n", blocks, threads, variants[v].label.c_str(), us, lo, hi, errs);
        }
        // The kernel boundary it replaces: K empty launches queued, and K nodes of one graph.
        std::vector<double> launches, nodes;
        cudaStream_t st;
        CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
        cudaGraph_t graph;
        CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
        for (int i = 0; i < K; ++i) empty<<<blocks, threads, 0, st>>>();
        CHECK(cudaStreamEndCapture(st, &graph));
        cudaGraphExec_t exec;
        CHECK(cudaGraphInstantiate(&exec, graph, 0));
        CHECK(cudaGraphUpload(exec, st));
        for (int r = 0; r < rounds; ++r) {
            for (int i = 0; i < 50; ++i) empty<<<blocks, threads, 0, st>>>();
            CHECK(cudaEventRecord(a, st));
            for (int i = 0; i < K; ++i) empty<<<blocks, threads, 0, st>>>();
            CHECK(cudaEventRecord(z, st));
            CHECK(cudaEventSynchronize(z));
            float ms;
            CHECK(cudaEventElapsedTime(&ms, a, z));
            launches.push_back(ms * 1e3 / K);
            CHECK(cudaEventRecord(a, st));
            CHECK(cudaGraphLaunch(exec, st));
            CHECK(cudaEventRecord(z, st));
            CHECK(cudaEventSynchronize(z));
            CHECK(cudaEventElapsedTime(&ms, a, z));
            nodes.push_back(ms * 1e3 / K);
        }
        std::printf("  %-22s  %7.3f us/launch\n", "kernel boundary", median(launches));
        std::printf("  %-22s  %7.3f us/node\n", "graph node", median(nodes));
        std::printf("RESULT %u %u \"kernel boundary\" %.4f 0 0 0\nRESULT %u %u \"graph node\" %.4f 0 0 0\n", blocks, threads, median(launches), blocks, threads,
                    median(nodes));
        CHECK(cudaGraphExecDestroy(exec));
        CHECK(cudaGraphDestroy(graph));
        CHECK(cudaStreamDestroy(st));
        std::fflush(stdout);
    }
    return 0;
}
