// Variant (slow candidate, a real mistake): the block's bins are private and
// merged once per bin, but by half a warp: "16 threads x 16 bins = 256", each
// of the first 16 threads walks its own 16 consecutive bins while the other
// 240 threads have finished, so every merging thread waits on a chain of 16
// global atomics.
#define NUM_BINS 256
#define MERGERS 16

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
