// Variant (correct): no shared atomics at all. Every thread writes its count to
// its own shared slot, then a tree over the 256 slots, then one global atomicAdd.
#define THREADS 256
extern "C" __global__ void pi_shared(const float *__restrict__ x, const float *__restrict__ y, int n,
                                     unsigned int *hits)
{
    __shared__ unsigned int counts[THREADS];
    unsigned int t = threadIdx.x;
    unsigned int mine = 0;
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + t; i < n; i += stride) {
        float a = __ldg(&x[i]), b = __ldg(&y[i]);
        if (a * a + b * b <= 1.0f)
            mine++;
    }
    counts[t] = mine;
    for (unsigned int s = THREADS / 2; s > 0; s >>= 1) {
        __syncthreads();
        if (t < s)
            counts[t] += counts[t + s];
    }
    if (t == 0)
        atomicAdd(hits, counts[0]);
}
