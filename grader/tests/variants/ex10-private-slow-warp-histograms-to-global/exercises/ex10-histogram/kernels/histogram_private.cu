// Variant (slow candidate, a real mistake): privatized one level too far.
// Each warp counts into its own copy of the bins in shared memory (fewer
// collisions), but the copies are merged straight into global memory, one
// global atomic per warp per bin it saw, instead of being summed in shared
// memory first: up to 8 global atomics per bin per block where one would do.
#define NUM_BINS 256
#define WARPS 8

extern "C" __global__ void histogram_private(const unsigned char *data, unsigned int n, unsigned int *bins)
{
    __shared__ unsigned int bins_s[WARPS][NUM_BINS];
    unsigned int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    for (unsigned int b = lane; b < NUM_BINS; b += 32)
        bins_s[warp][b] = 0u;
    __syncwarp();

    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&bins_s[warp][data[i]], 1u);
    __syncwarp();

    for (unsigned int b = lane; b < NUM_BINS; b += 32) {
        unsigned int count = bins_s[warp][b];
        if (count > 0)
            atomicAdd(&bins[b], count);
    }
}
