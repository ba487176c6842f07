// Every thread counts its interleaved bytes in 256 counters of its own (no
// atomics while counting), adds them to the block's shared bins, and the block
// merges once per bin. The counters are indexed by the data, so they live in
// local memory: a kilobyte per thread in device memory, a load and a store for
// every byte counted.
#define NUM_BINS 256

extern "C" __global__ void histogram_coarse(const unsigned char *data, unsigned int n, unsigned int *bins)
{
    __shared__ unsigned int bins_s[NUM_BINS];
    for (unsigned int b = threadIdx.x; b < NUM_BINS; b += blockDim.x)
        bins_s[b] = 0u;
    __syncthreads();

    unsigned int mine[NUM_BINS];
    for (int b = 0; b < NUM_BINS; b++)
        mine[b] = 0u;
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        mine[data[i]]++;
    for (int b = 0; b < NUM_BINS; b++)
        if (mine[b] > 0)
            atomicAdd(&bins_s[b], mine[b]);
    __syncthreads();

    for (unsigned int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) {
        unsigned int count = bins_s[b];
        if (count > 0)
            atomicAdd(&bins[b], count);
    }
}
