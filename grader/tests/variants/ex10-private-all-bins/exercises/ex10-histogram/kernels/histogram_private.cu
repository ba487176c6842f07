// ex10 `private`, a correct variant: written for exactly 256 threads, one bin
// per thread, every bin merged (zeros included): 256 global atomics per block,
// one per bin.
extern "C" __global__ void histogram_private(const unsigned char *data, unsigned int n, unsigned int *bins)
{
    __shared__ unsigned int bins_s[256];
    const unsigned int t = threadIdx.x;
    bins_s[t] = 0u;
    __syncthreads();
    const unsigned int i = blockIdx.x * 256u + t;
    if (i < n)
        atomicAdd(bins_s + data[i], 1u);
    __syncthreads();
    atomicAdd(bins + t, bins_s[t]);
}
