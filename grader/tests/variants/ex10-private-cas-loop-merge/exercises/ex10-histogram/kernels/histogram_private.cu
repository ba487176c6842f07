// The merge as a compare-and-swap loop: a plain first read, then every
// attempt retries with the value the CAS returned. Correct.
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
            for (unsigned int old = bins[b], seen; (seen = atomicCAS(&bins[b], old, old + count)) != old;)
                old = seen;
    }
}
