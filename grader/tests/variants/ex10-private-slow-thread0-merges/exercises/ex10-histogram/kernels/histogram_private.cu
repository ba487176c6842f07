// Variant (slow, a real mistake): the block's bins are private and merged once
// per bin, as the lesson asks, but thread 0 does the whole merge alone: a loop
// over the 256 bins while the other 255 threads have finished. A block counts
// only 256 bytes, so that serial loop is most of its time.
#define NUM_BINS 256

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

    if (threadIdx.x == 0) {
        for (unsigned int b = 0; b < NUM_BINS; b++) {
            unsigned int count = bins_s[b];
            if (count > 0)
                atomicAdd(&bins[b], count);
        }
    }
}
