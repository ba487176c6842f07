// ex10, part `private` (slow): the block counts its bytes in shared memory,
// but merges them one count at a time, so every byte still costs a global
// atomic on its bin, as in the `global` part. Correct; fails
// structure::merged-once-per-bin and the timing against one global atomic per byte.
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

    for (unsigned int b = threadIdx.x; b < NUM_BINS; b += blockDim.x)
        for (unsigned int k = 0; k < bins_s[b]; k++)
            atomicAdd(&bins[b], 1u);
}
