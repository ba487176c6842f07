// Variant (a real mistake that costs nothing on an H100: the merge bounds the kernel): the reference's private bins and
// merge, but the byte index transposed, i = threadIdx.x * gridDim.x +
// blockIdx.x ("the grid as a matrix, one row per thread"): every byte is still
// counted once, but the 32 lanes of a warp read bytes gridDim.x apart, 32
// sectors per load where one would do.
#define NUM_BINS 256

extern "C" __global__ void histogram_private(const unsigned char *data, unsigned int n, unsigned int *bins)
{
    __shared__ unsigned int bins_s[NUM_BINS];
    for (unsigned int b = threadIdx.x; b < NUM_BINS; b += blockDim.x)
        bins_s[b] = 0u;
    __syncthreads();

    unsigned int i = threadIdx.x * gridDim.x + blockIdx.x;
    if (i < n)
        atomicAdd(&bins_s[data[i]], 1u);
    __syncthreads();

    for (unsigned int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) {
        unsigned int count = bins_s[b];
        if (count > 0)
            atomicAdd(&bins[b], count);
    }
}
