// ex10 `private`, broken: the shared bins are never set to 0: they start with
// whatever the shared memory held.
extern "C" __global__ void histogram_private(const unsigned char *data, unsigned int n, unsigned int *bins)
{
    __shared__ unsigned int bins_s[256];
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&bins_s[data[i]], 1u);
    __syncthreads();
    for (unsigned int b = threadIdx.x; b < 256; b += blockDim.x)
        if (bins_s[b] > 0)
            atomicAdd(&bins[b], bins_s[b]);
}
