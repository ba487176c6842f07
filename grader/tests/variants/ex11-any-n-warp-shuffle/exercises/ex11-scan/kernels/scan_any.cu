// ex11 any-n, a correct variant: scan_sections with warp shuffles (each warp
// scans 64 elements, two per lane, then warp 0 scans the 16 warp totals);
// add_sums with a grid-stride loop over the section.
#define SECTION_SIZE 1024

__device__ int warp_inclusive(int v, unsigned int lane) {
    for (int d = 1; d < 32; d *= 2) {
        int up = __shfl_up_sync(0xffffffffu, v, d);
        if (lane >= d) v += up;
    }
    return v;
}

extern "C" __global__ void scan_sections(const int *in, int *out, int *sums, int n) {
    __shared__ int warp_totals[32];
    const unsigned int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const unsigned int warps = blockDim.x >> 5;
    // warp w owns elements [64 w, 64 w + 64) of the section: lane l has 64w + l and 64w + 32 + l
    const unsigned int first = blockIdx.x * SECTION_SIZE + 64 * warp + lane;
    const unsigned int second = first + 32;
    int lo = first < n ? in[first] : 0;
    int hi = second < n ? in[second] : 0;
    lo = warp_inclusive(lo, lane);
    hi = warp_inclusive(hi, lane) + __shfl_sync(0xffffffffu, lo, 31);
    if (lane == 31) warp_totals[warp] = hi;
    __syncthreads();
    if (warp == 0) {
        int s = lane < warps ? warp_totals[lane] : 0;
        s = warp_inclusive(s, lane);
        if (lane < warps) warp_totals[lane] = s;
    }
    __syncthreads();
    int before = warp > 0 ? warp_totals[warp - 1] : 0;
    if (first < n) out[first] = lo + before;
    if (second < n) out[second] = hi + before;
    if (threadIdx.x == 0) sums[blockIdx.x] = warp_totals[warps - 1];
}

extern "C" __global__ void add_sums(int *out, const int *scanned_sums, int n) {
    if (blockIdx.x == 0) return;
    const int offset = scanned_sums[blockIdx.x - 1];
    const unsigned int end = min((unsigned int)n, (blockIdx.x + 1) * SECTION_SIZE);
    for (unsigned int i = blockIdx.x * SECTION_SIZE + threadIdx.x; i < end; i += blockDim.x) out[i] += offset;
}
