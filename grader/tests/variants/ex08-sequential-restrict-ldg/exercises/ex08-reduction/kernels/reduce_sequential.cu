// Variant (correct): __restrict__ and __ldg, the loop unrolled for the fixed
// block size, the barrier after each step.
#define THREADS 256
extern "C" __global__ void reduce_sequential(const int *__restrict__ in, int n, int *__restrict__ partial)
{
    __shared__ int partialSum[THREADS];
    int t = threadIdx.x;
    int i = blockIdx.x * THREADS + t;
    partialSum[t] = i < n ? __ldg(&in[i]) : 0;
    __syncthreads();
#pragma unroll
    for (int stride = THREADS / 2; stride > 0; stride /= 2) {
        if (t < stride)
            partialSum[t] += partialSum[t + stride];
        __syncthreads();
    }
    if (t == 0)
        partial[blockIdx.x] = partialSum[0];
}
