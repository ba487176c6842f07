// ex10 `global`, broken: no bounds check: the last block's threads past n read
// bytes after the input and count them.
extern "C" __global__ void histogram_global(const unsigned char *data, unsigned int n, unsigned int *bins)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    atomicAdd(&bins[data[i]], 1u);
}
