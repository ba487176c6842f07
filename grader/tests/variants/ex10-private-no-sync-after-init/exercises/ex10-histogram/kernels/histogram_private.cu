// ex10 `private`, broken: no __syncthreads() between zeroing the shared bins and
// counting: a warp may count into a bin that another warp zeroes afterwards.
extern "C" __global__ void histogram_private(const unsigned char *data, unsigned int n, unsigned int *bins)
{
    __shared__ unsigned int bins_s[256];
    for (unsigned int b = threadIdx.x; b < 256; b += blockDim.x)
        bins_s[b] = 0u;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&bins_s[data[i]], 1u);
    __syncthreads();
    for (unsigned int b = threadIdx.x; b < 256; b += blockDim.x)
        if (bins_s[b] > 0)
            atomicAdd(&bins[b], bins_s[b]);
}
