// ex10 `coarse`, broken: the private kernel of the part before, one byte per
// thread: with the coarse part's small grid most bytes are never counted.
extern "C" __global__ void histogram_coarse(const unsigned char *data, unsigned int n, unsigned int *bins)
{
    __shared__ unsigned int bins_s[256];
    for (unsigned int b = threadIdx.x; b < 256; b += blockDim.x)
        bins_s[b] = 0u;
    __syncthreads();
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&bins_s[data[i]], 1u);
    __syncthreads();
    for (unsigned int b = threadIdx.x; b < 256; b += blockDim.x)
        if (bins_s[b] > 0)
            atomicAdd(&bins[b], bins_s[b]);
}
