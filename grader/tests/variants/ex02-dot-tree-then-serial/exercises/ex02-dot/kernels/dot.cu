// ex02 `dot` with half a tree: two levels (256 -> 64 sums), then thread 0 adds
// the last quarter of the block's sums one after another. Right numbers, but
// 64 sequential shared loads in one thread where a tree takes six more levels.
#define THREADS 256 // == blockDim.x, fixed by the host

extern "C" __global__ void dot(const float *a, const float *b, int n, float *partial)
{
    __shared__ float cache[THREADS];
    unsigned int t = threadIdx.x;

    float sum = 0.0f;
    unsigned int stride = gridDim.x * blockDim.x;
    for (unsigned int i = blockIdx.x * blockDim.x + t; i < (unsigned int)n; i += stride)
        sum += a[i] * b[i];
    cache[t] = sum;

    for (unsigned int s = blockDim.x / 2; s >= blockDim.x / 4; s >>= 1) {
        __syncthreads();
        if (t < s)
            cache[t] += cache[t + s];
    }
    __syncthreads();
    if (t == 0) {
        float total = 0.0f;
        for (unsigned int k = 0; k < blockDim.x / 4; k++)
            total += cache[k];
        partial[blockIdx.x] = total;
    }
}
