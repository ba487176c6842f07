// ex10 `global`, a correct style variant: a grid-stride loop, __ldg, the
// atomic's result ignored as an explicit cast. One global atomic per byte.
extern "C" __global__ void histogram_global(const unsigned char *__restrict__ data, unsigned int n,
                                            unsigned int *__restrict__ bins)
{
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        (void)atomicAdd(bins + __ldg(data + i), 1u);
}
