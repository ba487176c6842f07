// ex10, part `coarse` (slow): private bins and many bytes per thread, but each
// thread counts a contiguous chunk of its own (PMPP 4th ed., Fig. 9.12), so the
// 32 lanes of a warp read 32 bytes a chunk apart: a sector per lane. Correct;
// fails structure::interleaved-reads and the timing against the interleaved kernel.
#define NUM_BINS 256

extern "C" __global__ void histogram_coarse(const unsigned char *data, unsigned int n, unsigned int *bins)
{
    __shared__ unsigned int bins_s[NUM_BINS];
    for (unsigned int b = threadIdx.x; b < NUM_BINS; b += blockDim.x)
        bins_s[b] = 0u;
    __syncthreads();

    unsigned int threads = blockDim.x * gridDim.x;
    unsigned int chunk = (n + threads - 1) / threads;
    unsigned int tid = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int begin = tid * chunk;
    unsigned int end = min(begin + chunk, n);
    for (unsigned int i = begin; i < end; i++)
        atomicAdd(&bins_s[data[i]], 1u);
    __syncthreads();

    for (unsigned int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) {
        unsigned int count = bins_s[b];
        if (count > 0)
            atomicAdd(&bins[b], count);
    }
}
