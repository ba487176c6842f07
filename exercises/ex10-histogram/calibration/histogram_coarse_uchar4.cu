// ex10 `coarse`, a correct variant: reads 4 bytes per lane (uchar4), interleaved
// over the grid, and the last n % 4 bytes one at a time.
#define NUM_BINS 256

extern "C" __global__ void histogram_coarse(const unsigned char *data, unsigned int n, unsigned int *bins)
{
    __shared__ unsigned int bins_s[NUM_BINS];
    for (unsigned int b = threadIdx.x; b < NUM_BINS; b += blockDim.x)
        bins_s[b] = 0u;
    __syncthreads();

    const unsigned int tid = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned int threads = blockDim.x * gridDim.x;
    const uchar4 *quads = (const uchar4 *)data;
    for (unsigned int q = tid; q < n / 4; q += threads) {
        uchar4 v = quads[q];
        atomicAdd(&bins_s[v.x], 1u);
        atomicAdd(&bins_s[v.y], 1u);
        atomicAdd(&bins_s[v.z], 1u);
        atomicAdd(&bins_s[v.w], 1u);
    }
    for (unsigned int i = n / 4 * 4 + tid; i < n; i += threads)
        atomicAdd(&bins_s[data[i]], 1u);
    __syncthreads();

    for (unsigned int b = threadIdx.x; b < NUM_BINS; b += blockDim.x)
        if (bins_s[b])
            atomicAdd(&bins[b], bins_s[b]);
}
