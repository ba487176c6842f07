// Variant (correct): register sums, then shuffles inside each warp, the eight
// warp sums through shared memory, and warp 0 adds those with shuffles again.
#define THREADS 256
extern "C" __global__ void dot(const float *a, const float *b, int n, float *partial)
{
    __shared__ float warp_sums[THREADS / 32];
    unsigned int t = threadIdx.x;
    float sum = 0.0f;
    unsigned int stride = gridDim.x * blockDim.x;
    for (unsigned int i = blockIdx.x * blockDim.x + t; i < (unsigned int)n; i += stride)
        sum += a[i] * b[i];
    for (int offset = 16; offset > 0; offset >>= 1)
        sum += __shfl_down_sync(0xffffffffu, sum, offset);
    if ((t & 31) == 0)
        warp_sums[t / 32] = sum;
    __syncthreads();
    if (t < 32) {
        sum = t < THREADS / 32 ? warp_sums[t] : 0.0f;
        for (int offset = 16; offset > 0; offset >>= 1)
            sum += __shfl_down_sync(0xffffffffu, sum, offset);
        if (t == 0)
            partial[blockIdx.x] = sum;
    }
}
