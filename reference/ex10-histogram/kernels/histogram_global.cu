// ex10, part `global` (reference): one global atomic per byte.
extern "C" __global__ void histogram_global(const unsigned char *data, unsigned int n, unsigned int *bins)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&bins[data[i]], 1u);
}
