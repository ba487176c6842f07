// Variant (a real mistake that costs nothing on an H100: the merge bounds the kernel): the reference's private bins and
// merge, but each shared bin padded to 64 bytes "so that no two bins share a
// cache line" (false sharing, a CPU habit). Shared memory has no lines to
// share: the padding puts every bin in bank 0 or 16, so the lanes of a warp
// that count different bytes, clear or merge their bins queue on two banks
// (16-way conflicts) where the reference spreads over 32.
#define NUM_BINS 256
#define PAD 16 // unsigned ints per 64-byte line

extern "C" __global__ void histogram_private(const unsigned char *data, unsigned int n, unsigned int *bins)
{
    __shared__ unsigned int bins_s[NUM_BINS * PAD];
    for (unsigned int b = threadIdx.x; b < NUM_BINS; b += blockDim.x)
        bins_s[b * PAD] = 0u;
    __syncthreads();

    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&bins_s[data[i] * PAD], 1u);
    __syncthreads();

    for (unsigned int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) {
        unsigned int count = bins_s[b * PAD];
        if (count > 0)
            atomicAdd(&bins[b], count);
    }
}
