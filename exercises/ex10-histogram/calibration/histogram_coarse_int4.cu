// ex10 `coarse`, a correct variant: 16 bytes per lane (int4 through __ldg),
// interleaved over the grid, the tail byte by byte.
#define NUM_BINS 256

extern "C" __global__ void histogram_coarse(const unsigned char *__restrict__ data, unsigned int n,
                                            unsigned int *__restrict__ bins)
{
    __shared__ unsigned int bins_s[NUM_BINS];
    for (unsigned int b = threadIdx.x; b < NUM_BINS; b += blockDim.x)
        bins_s[b] = 0u;
    __syncthreads();

    const unsigned int tid = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned int threads = blockDim.x * gridDim.x;
    const int4 *words = (const int4 *)data;
    for (unsigned int w = tid; w < n / 16; w += threads) {
        int4 v = __ldg(&words[w]);
        unsigned int parts[4] = {(unsigned int)v.x, (unsigned int)v.y, (unsigned int)v.z, (unsigned int)v.w};
#pragma unroll
        for (int p = 0; p < 4; p++)
#pragma unroll
            for (int k = 0; k < 4; k++)
                atomicAdd(&bins_s[(parts[p] >> (8 * k)) & 0xffu], 1u);
    }
    for (unsigned int i = n / 16 * 16 + tid; i < n; i += threads)
        atomicAdd(&bins_s[data[i]], 1u);
    __syncthreads();

    for (unsigned int b = threadIdx.x; b < NUM_BINS; b += blockDim.x)
        if (bins_s[b] > 0)
            atomicAdd(&bins[b], bins_s[b]);
}
