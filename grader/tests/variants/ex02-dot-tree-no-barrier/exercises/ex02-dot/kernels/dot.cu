// Variant: the tree has one barrier before it and none between its steps, so a
// thread may read cache[t + s] before its owner (in another warp) added to it.
#define THREADS 256
extern "C" __global__ void dot(const float *a, const float *b, int n, float *partial)
{
    __shared__ float cache[THREADS];
    unsigned int t = threadIdx.x;
    float sum = 0.0f;
    unsigned int stride = gridDim.x * blockDim.x;
    for (unsigned int i = blockIdx.x * blockDim.x + t; i < (unsigned int)n; i += stride)
        sum += a[i] * b[i];
    cache[t] = sum;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s)
            cache[t] += cache[t + s];
    }
    if (t == 0)
        partial[blockIdx.x] = cache[0];
}
