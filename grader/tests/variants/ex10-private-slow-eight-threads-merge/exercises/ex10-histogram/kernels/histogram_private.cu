// Variant (slow candidate, a real mistake): the block's bins are private and
// merged once per bin, but only the first 8 threads merge, "one thread per
// 32 bins, so that fewer threads touch global memory": each walks its own 32
// consecutive bins in a loop while the other 248 threads have finished.
#define NUM_BINS 256
#define MERGERS 8

extern "C" __global__ void histogram_private(const unsigned char *data, unsigned int n, unsigned int *bins)
{
    __shared__ unsigned int bins_s[NUM_BINS];
    for (unsigned int b = threadIdx.x; b < NUM_BINS; b += blockDim.x)
        bins_s[b] = 0u;
    __syncthreads();

    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&bins_s[data[i]], 1u);
    __syncthreads();

    if (threadIdx.x < MERGERS) {
        unsigned int first = threadIdx.x * (NUM_BINS / MERGERS);
        for (unsigned int b = first; b < first + NUM_BINS / MERGERS; b++) {
            unsigned int count = bins_s[b];
            if (count > 0)
                atomicAdd(&bins[b], count);
        }
    }
}
