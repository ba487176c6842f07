// Dot product: grid-stride partial sums, then a shared-memory tree reduction.
#define THREADS 256
extern "C" __global__ void dot(const float *a, const float *b, float *partial, int n)
{
    __shared__ float cache[THREADS];
    int tid = threadIdx.x;
    float sum = 0.0f;
    for (int i = blockIdx.x * blockDim.x + tid; i < n; i += gridDim.x * blockDim.x)
        sum += a[i] * b[i];
    cache[tid] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s)
            cache[tid] += cache[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        partial[blockIdx.x] = cache[0];
}
