// Variant (correct): four independent accumulators in the grid-stride loop,
// then the reference's shared tree with a fully unrolled loop.
#define THREADS 256
extern "C" __global__ void dot(const float *a, const float *b, int n, float *partial)
{
    __shared__ float cache[THREADS];
    unsigned int t = threadIdx.x;
    unsigned int stride = gridDim.x * blockDim.x;
    unsigned int i = blockIdx.x * blockDim.x + t;
    float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
    for (; i + 3 * stride < (unsigned int)n; i += 4 * stride) {
        s0 += a[i] * b[i];
        s1 += a[i + stride] * b[i + stride];
        s2 += a[i + 2 * stride] * b[i + 2 * stride];
        s3 += a[i + 3 * stride] * b[i + 3 * stride];
    }
    for (; i < (unsigned int)n; i += stride)
        s0 += a[i] * b[i];
    cache[t] = (s0 + s1) + (s2 + s3);
#pragma unroll
    for (unsigned int s = THREADS / 2; s > 0; s >>= 1) {
        __syncthreads();
        if (t < s)
            cache[t] += cache[t + s];
    }
    if (t == 0)
        partial[blockIdx.x] = cache[0];
}
