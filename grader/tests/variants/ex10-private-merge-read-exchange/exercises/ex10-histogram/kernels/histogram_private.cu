// The merge reads the global bin and exchanges in the sum: two steps, so a
// block that merges the same bin between them loses its count on a GPU.
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

    for (unsigned int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) {
        unsigned int count = bins_s[b];
        if (count > 0)
            atomicExch(&bins[b], bins[b] + count);
    }
}
