// ex10 `private`, a correct variant: warp-aggregated shared atomics. The lanes
// of a warp holding the same byte find each other (__match_any_sync) and the
// lowest of them adds their number: one shared atomic per distinct byte per warp.
#define NUM_BINS 256

extern "C" __global__ void histogram_private(const unsigned char *data, unsigned int n, unsigned int *bins)
{
    __shared__ unsigned int bins_s[NUM_BINS];
    for (unsigned int b = threadIdx.x; b < NUM_BINS; b += blockDim.x)
        bins_s[b] = 0u;
    __syncthreads();

    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned int value = data[i];
        unsigned int peers = __match_any_sync(__activemask(), value);
        unsigned int lane = threadIdx.x % 32;
        if (lane == __ffs(peers) - 1)
            atomicAdd(&bins_s[value], __popc(peers));
    }
    __syncthreads();

    for (unsigned int b = threadIdx.x; b < NUM_BINS; b += blockDim.x)
        if (bins_s[b] != 0)
            atomicAdd(&bins[b], bins_s[b]);
}
