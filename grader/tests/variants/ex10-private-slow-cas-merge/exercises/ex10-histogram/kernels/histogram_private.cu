// ex10 `private`, slow (a moderate mistake): the reference, but the merge adds
// each bin with a compare-and-swap loop (the Programming Guide's pattern for an
// atomic the hardware lacks) instead of atomicAdd: a round trip per attempt,
// and every block retries on the few hot bins the other blocks merge at once.
// Correct, one merge per bin per block.
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
        if (count > 0) {
            unsigned int old = bins[b], assumed;
            do {
                assumed = old;
                old = atomicCAS(&bins[b], assumed, assumed + count);
            } while (old != assumed);
        }
    }
}
