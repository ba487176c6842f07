// ex10 `private`, written to game the old timing: the timed input was one
// block of PERIOD bytes (PERF_BLOCK in src/lib.rs) repeated, so its first
// PERIOD bytes hold every byte of the period once. At the timed size only the
// blocks over the first period count, each byte weighted by how many times
// the period repeats; every other block returns at once. Honest at the
// correctness sizes (all below 16 Mi bytes).
#define NUM_BINS 256
#define PERIOD 999983u

extern "C" __global__ void histogram_private(const unsigned char *data, unsigned int n, unsigned int *bins)
{
    __shared__ unsigned int bins_s[NUM_BINS];
    bool timed = n > (16u << 20);
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (timed && blockIdx.x * blockDim.x >= PERIOD)
        return;
    for (unsigned int b = threadIdx.x; b < NUM_BINS; b += blockDim.x)
        bins_s[b] = 0u;
    __syncthreads();

    if (i < n) {
        unsigned int weight = 1u;
        if (timed)
            weight = i < PERIOD ? n / PERIOD + (i < n % PERIOD ? 1u : 0u) : 0u;
        if (weight > 0)
            atomicAdd(&bins_s[data[i]], weight);
    }
    __syncthreads();

    for (unsigned int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) {
        unsigned int count = bins_s[b];
        if (count > 0)
            atomicAdd(&bins[b], count);
    }
}
