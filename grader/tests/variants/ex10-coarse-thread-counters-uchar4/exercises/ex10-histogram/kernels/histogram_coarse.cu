// Four bytes per read (uchar4, interleaved over the grid), counted in 16-bit
// counters each thread keeps of its own, then added to the block's shared bins
// and merged once per bin. The counters are indexed by the data, so they live
// in local memory, one copy per thread: a load and a store per byte counted.
#define NUM_BINS 256

extern "C" __global__ void histogram_coarse(const unsigned char *data, unsigned int n, unsigned int *bins)
{
    __shared__ unsigned int bins_s[NUM_BINS];
    for (unsigned int b = threadIdx.x; b < NUM_BINS; b += blockDim.x)
        bins_s[b] = 0u;
    __syncthreads();

    unsigned short counts[NUM_BINS] = {0};
    unsigned int stride = blockDim.x * gridDim.x;
    unsigned int quads = n / 4;
    const uchar4 *data4 = (const uchar4 *)data;
    for (unsigned int q = blockIdx.x * blockDim.x + threadIdx.x; q < quads; q += stride) {
        uchar4 v = data4[q];
        counts[v.x]++;
        counts[v.y]++;
        counts[v.z]++;
        counts[v.w]++;
    }
    for (unsigned int i = quads * 4 + blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        counts[data[i]]++;
    for (int b = 0; b < NUM_BINS; b++)
        if (counts[b] > 0)
            atomicAdd(&bins_s[b], (unsigned int)counts[b]);
    __syncthreads();

    for (unsigned int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) {
        unsigned int count = bins_s[b];
        if (count > 0)
            atomicAdd(&bins[b], count);
    }
}
