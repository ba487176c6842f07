// ex11 kogge-stone, a correct variant: Kogge-Stone inside each warp with
// shuffles (no shared memory, no barrier), then the 32 warp totals scanned
// the same way by warp 0. Two barriers per section.
#define SECTION_SIZE 1024

extern "C" __global__ void kogge_stone_scan(const int *X, int *Y, int n) {
    __shared__ int warp_sums[32];
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int v = i < n ? X[i] : 0;
    for (int d = 1; d < 32; d *= 2) {
        int up = __shfl_up_sync(0xffffffffu, v, d);
        if (lane >= d) v += up;
    }
    if (lane == 31) warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) {
        int s = warp_sums[lane];
        for (int d = 1; d < 32; d *= 2) {
            int up = __shfl_up_sync(0xffffffffu, s, d);
            if (lane >= d) s += up;
        }
        warp_sums[lane] = s;
    }
    __syncthreads();
    if (warp > 0) v += warp_sums[warp - 1];
    if (i < n) Y[i] = v;
}
