// ex10 `global`, broken: the bytes read as `char`, which is signed: bytes from
// 0x80 up index bins[-128 .. -1], before the bins.
extern "C" __global__ void histogram_global(const unsigned char *data, unsigned int n, unsigned int *bins)
{
    const char *text = (const char *)data;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&bins[(int)text[i]], 1u);
}
