// ex10 `private`, slow (a real mistake, milder than one thread merging): the
// merge is written as a loop over all 256 bins in which every thread waits
// for its own bin (`if (threadIdx.x == b)`), instead of a loop strided by
// blockDim.x. Each bin is still merged once, by one thread, but every warp
// walks all 256 iterations with one lane at a time active.
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

    for (unsigned int b = 0; b < NUM_BINS; ++b) {
        if (threadIdx.x == b % blockDim.x) {
            unsigned int count = bins_s[b];
            if (count > 0)
                atomicAdd(&bins[b], count);
        }
        __syncwarp();
    }
}
