// ex11 any-n, correct, in the style of CUB's BlockScan (warp scans): each
// thread scans its two consecutive elements in registers, the warps scan
// their threads' pair totals with __shfl_up_sync, warp 0 scans the 16 warp
// totals, and every thread adds what comes before it. add_sums: int2 per thread.
#define SECTION_SIZE 1024

__device__ int warp_inclusive(int v) {
    int lane = threadIdx.x & 31;
    for (int d = 1; d < 32; d *= 2) {
        int u = __shfl_up_sync(0xffffffffu, v, d);
        if (lane >= d) v += u;
    }
    return v;
}

extern "C" __global__ void scan_sections(const int *in, int *out, int *sums, int n) {
    __shared__ int warp_total[32];
    int t = threadIdx.x, lane = t & 31, warp = t >> 5, warps = blockDim.x >> 5;
    int i = blockIdx.x * SECTION_SIZE + 2 * t;
    int x0 = i < n ? in[i] : 0;
    int x1 = i + 1 < n ? in[i + 1] : 0;
    int pair = x0 + x1;
    int incl = warp_inclusive(pair);
    if (lane == 31) warp_total[warp] = incl;
    __syncthreads();
    if (warp == 0) {
        int w = lane < warps ? warp_total[lane] : 0;
        w = warp_inclusive(w);
        if (lane < warps) warp_total[lane] = w;
    }
    __syncthreads();
    int before = incl - pair + (warp > 0 ? warp_total[warp - 1] : 0);
    if (i < n) out[i] = before + x0;
    if (i + 1 < n) out[i + 1] = before + x0 + x1;
    if (t == 0) sums[blockIdx.x] = warp_total[warps - 1];
}

extern "C" __global__ void add_sums(int *out, const int *scanned_sums, int n) {
    if (blockIdx.x == 0) return;
    int offset = scanned_sums[blockIdx.x - 1];
    int i = blockIdx.x * SECTION_SIZE + 2 * threadIdx.x;
    if (i + 1 < n) {
        int2 v = reinterpret_cast<int2 *>(out)[i / 2];
        v.x += offset;
        v.y += offset;
        reinterpret_cast<int2 *>(out)[i / 2] = v;
    } else if (i < n) {
        out[i] += offset;
    }
}
