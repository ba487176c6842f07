// Issue 49, on a GPU machine: what a kernel sees of its warps' places and clocks,
// the figures ptx-sim's device model (ptx-sim/src/device.rs) shows in their stead.
//   nvcc -O3 -arch=sm_90 -o /tmp/clocks scripts/gpu-49-clocks.cu && /tmp/clocks
// Prints, per grid size: the %warpid values of a block's warps (do they stay
// below the block's own warp count?), and %clock64 laps: consecutive reads,
// dependent ALU, shared loads, shared atomics, global loads and atomics, and
// how much the laps of a block's warps differ.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)

__device__ __forceinline__ long long now() {
    long long t;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)::"memory");
    return t;
}
__device__ __forceinline__ unsigned warpid() {
    unsigned w;
    asm volatile("mov.u32 %0, %%warpid;" : "=r"(w));
    return w;
}
__device__ __forceinline__ unsigned smid() {
    unsigned w;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(w));
    return w;
}

// Per warp: its %warpid, %smid, and seven laps.
struct Row { unsigned warpid, smid; long long empty, alu, shld, shatom, gld, gatom, mad; };

__global__ void probe(Row *rows, unsigned *chain, unsigned *gbins, int spin) {
    __shared__ unsigned s[64];
    unsigned lane = threadIdx.x % 32, w = threadIdx.x / 32;
    if (threadIdx.x < 64) s[threadIdx.x] = (threadIdx.x * 7 + 3) % 64;
    __syncthreads();
    Row r;
    r.warpid = warpid();
    r.smid = smid();
    long long t0 = now(), t1 = now();
    r.empty = t1 - t0;
    // 64 dependent integer multiply-adds
    unsigned x = threadIdx.x, y = ~threadIdx.x;
    t0 = now();
    for (int k = 0; k < 32; k++) {
        asm volatile("mad.lo.u32 %0, %0, 1664525, 1013904223;" : "+r"(x));
        asm volatile("mad.lo.u32 %0, %0, 22695477, 1;" : "+r"(y));
    }
    t1 = now();
    r.mad = t1 - t0;
    // 32 dependent adds
    t0 = now();
    for (int k = 0; k < 32; k++) asm volatile("add.u32 %0, %0, 3;" : "+r"(x));
    t1 = now();
    r.alu = t1 - t0;
    // 16 dependent shared loads (pointer chase)
    unsigned at = lane;
    t0 = now();
    for (int k = 0; k < 16; k++) at = s[at];
    t1 = now();
    r.shld = t1 - t0;
    // 16 dependent shared atomics (ex10's cheat's probe)
    t0 = now();
    for (int k = 0; k < 16; k++) at = (atomicAdd(&s[at % 64], 0u) + at + 7u) & 63u;
    t1 = now();
    r.shatom = t1 - t0;
    // 16 dependent global loads (L2/L1 resident chain)
    unsigned g = lane;
    t0 = now();
    for (int k = 0; k < 16; k++) g = chain[g];
    t1 = now();
    r.gld = t1 - t0;
    // 16 dependent global atomics
    t0 = now();
    for (int k = 0; k < 16; k++) g = (atomicAdd(&gbins[g & 255], 0u) + g + 7u) & 255u;
    t1 = now();
    r.gatom = t1 - t0;
    if (lane == 0) rows[blockIdx.x * (blockDim.x / 32) + w] = r;
    if (x == 12345678u && g == 77777u && spin) s[0] = x;  // keep x and g
}

int main() {
    unsigned *chain, *gbins;
    CK(cudaMalloc(&chain, 4096 * 4)); CK(cudaMalloc(&gbins, 256 * 4));
    std::vector<unsigned> h(4096);
    for (int i = 0; i < 4096; i++) h[i] = (i * 97 + 31) % 1024;
    CK(cudaMemcpy(chain, h.data(), 4096 * 4, cudaMemcpyHostToDevice));
    CK(cudaMemset(gbins, 0, 1024));
    int threads_list[] = {256, 512};
    int blocks_list[] = {1, 4, 16, 49, 132, 264, 528, 2048};
    for (int threads : threads_list) for (int blocks : blocks_list) {
        int wpb = threads / 32, nw = blocks * wpb;
        Row *d; CK(cudaMalloc(&d, nw * sizeof(Row)));
        for (int rep = 0; rep < 2; rep++) probe<<<blocks, threads>>>(d, chain, gbins, 0);
        CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
        std::vector<Row> r(nw); CK(cudaMemcpy(r.data(), d, nw * sizeof(Row), cudaMemcpyDeviceToHost));
        int above = 0, maxw = 0; int blocks_above = 0;
        for (int b = 0; b < blocks; b++) {
            bool any = false;
            for (int w = 0; w < wpb; w++) { unsigned v = r[b * wpb + w].warpid; maxw = std::max(maxw, (int)v); if ((int)v >= wpb) { above++; any = true; } }
            blocks_above += any;
        }
        printf("threads %d blocks %4d: warps with %%warpid >= %d: %d of %d; blocks with one: %d of %d; max %%warpid %d\n",
               threads, blocks, wpb, above, nw, blocks_above, blocks, maxw);
        printf("  block 0 warpids:"); for (int w = 0; w < wpb; w++) printf(" %u", r[w].warpid);
        printf("  smid %u", r[0].smid);
        if (blocks > 1) { printf(" | last block:"); for (int w = 0; w < wpb; w++) printf(" %u", r[(blocks - 1) * wpb + w].warpid); printf("  smid %u", r[(blocks-1)*wpb].smid); }
        printf("\n");
        auto stat = [&](const char *name, long long Row::*f) {
            std::vector<long long> v; for (auto &x : r) v.push_back(x.*f);
            std::sort(v.begin(), v.end());
            int distinct0 = 1; for (int w = 1; w < wpb; w++) distinct0 += r[w].*f != r[0].*f ? 1 : 0;
            int equal_blocks = 0;
            for (int b = 0; b < blocks; b++) { bool eq = true; for (int w = 1; w < wpb; w++) eq = eq && r[b*wpb+w].*f == r[b*wpb].*f; equal_blocks += eq; }
            printf("  %-7s min %6lld median %6lld max %6lld; blocks whose warps all read one lap: %d of %d; block 0 laps:", name, v[0], v[v.size()/2], v.back(), equal_blocks, blocks);
            for (int w = 0; w < std::min(wpb, 16); w++) printf(" %lld", r[w].*f);
            printf("\n");
        };
        stat("empty", &Row::empty); stat("mad64", &Row::mad); stat("add32", &Row::alu); stat("shld16", &Row::shld);
        stat("shatm16", &Row::shatom); stat("gld16", &Row::gld); stat("gatm16", &Row::gatom);
        CK(cudaFree(d));
    }
    return 0;
}
