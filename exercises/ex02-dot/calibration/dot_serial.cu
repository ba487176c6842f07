// Wrong-technique variant for ex02 (measured checks): the sums go to shared
// memory behind a barrier, then thread 0 adds all 256 one after another.
// Correct, spells shared memory and a barrier: must fail `parallel-block-reduction`.
extern "C" __global__ void dot(const float *a, const float *b, int n, float *partial)
{
    __shared__ float cache[256];
    unsigned int t = threadIdx.x;
    float sum = 0.0f;
    for (unsigned int i = blockIdx.x * blockDim.x + t; i < (unsigned int)n; i += gridDim.x * blockDim.x)
        sum += a[i] * b[i];
    cache[t] = sum;
    __syncthreads();
    if (t == 0) {
        float total = 0.0f;
        for (int j = 0; j < 256; j++)
            total += cache[j];
        partial[blockIdx.x] = total;
    }
}
