// Style variant for ex02 (measured checks): register sums, warp shuffles, the
// eight warp sums in shared memory, a last shuffle in warp 0. Correct, a
// reduction without a shared tree: must pass `parallel-block-reduction`.
extern "C" __global__ void dot(const float *__restrict__ a, const float *__restrict__ b, int n, float *partial)
{
    __shared__ float warpSums[8];
    unsigned int t = threadIdx.x;
    float sum = 0.0f;
    for (unsigned int i = blockIdx.x * blockDim.x + t; i < (unsigned int)n; i += gridDim.x * blockDim.x)
        sum += __ldg(a + i) * __ldg(b + i);
    for (int o = 16; o > 0; o >>= 1)
        sum += __shfl_down_sync(0xffffffffu, sum, o);
    if ((t & 31) == 0)
        warpSums[t >> 5] = sum;
    __syncthreads();
    if (t < 32) {
        sum = t < 8 ? warpSums[t] : 0.0f;
        for (int o = 4; o > 0; o >>= 1)
            sum += __shfl_down_sync(0xffffffffu, sum, o);
        if (t == 0)
            partial[blockIdx.x] = sum;
    }
}
