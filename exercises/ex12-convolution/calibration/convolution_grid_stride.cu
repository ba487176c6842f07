// Style variant for ex12 (measured stand-in): a grid-stride loop with
// __restrict__ and __ldg. Correct and coalesced: must pass the stand-in of
// `share-of-copy`.
extern "C" __global__ void convolution(const float *__restrict__ in, float *__restrict__ out, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        out[i] = __ldg(&in[i]) * 2.0f;
}
