// Variant (correct): __restrict__ and __ldg loads, an int loop counter, and the
// tree written with a barrier after each step instead of before.
#define THREADS 256
extern "C" __global__ void dot(const float *__restrict__ a, const float *__restrict__ b, int n,
                               float *__restrict__ partial)
{
    __shared__ float cache[THREADS];
    int t = threadIdx.x;
    float sum = 0.0f;
    for (long long i = blockIdx.x * (long long)blockDim.x + t; i < n; i += (long long)gridDim.x * blockDim.x)
        sum += __ldg(&a[i]) * __ldg(&b[i]);
    cache[t] = sum;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s /= 2) {
        if (t < s)
            cache[t] += cache[t + s];
        __syncthreads();
    }
    if (t == 0)
        partial[blockIdx.x] = cache[0];
}
