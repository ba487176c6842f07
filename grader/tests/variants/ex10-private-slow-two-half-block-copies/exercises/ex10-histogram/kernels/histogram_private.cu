// Variant (slow candidate, a real mistake): two private copies of the bins,
// one per half of the block "to halve the collisions on each shared bin",
// both merged straight into global memory instead of being summed in shared
// memory first: two global atomics per bin per block where one would do.
#define NUM_BINS 256

extern "C" __global__ void histogram_private(const unsigned char *data, unsigned int n, unsigned int *bins)
{
    __shared__ unsigned int bins_s[2][NUM_BINS];
    unsigned int half = threadIdx.x < blockDim.x / 2 ? 0 : 1;
    for (unsigned int b = threadIdx.x; b < 2 * NUM_BINS; b += blockDim.x)
        bins_s[b / NUM_BINS][b % NUM_BINS] = 0u;
    __syncthreads();

    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&bins_s[half][data[i]], 1u);
    __syncthreads();

    for (unsigned int b = threadIdx.x; b < 2 * NUM_BINS; b += blockDim.x) {
        unsigned int count = bins_s[b / NUM_BINS][b % NUM_BINS];
        if (count > 0)
            atomicAdd(&bins[b % NUM_BINS], count);
    }
}
