// Variant (correct): the tree fully unrolled for 256 threads; the last warp
// works on a volatile view with __syncwarp() between its steps.
#define THREADS 256
extern "C" __global__ void reduce_sequential(const int *in, int n, int *partial)
{
    __shared__ int partialSum[THREADS];
    unsigned int t = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + t;
    partialSum[t] = i < (unsigned int)n ? in[i] : 0;
    __syncthreads();
    if (t < 128) partialSum[t] += partialSum[t + 128];
    __syncthreads();
    if (t < 64) partialSum[t] += partialSum[t + 64];
    __syncthreads();
    if (t < 32) {
        volatile int *p = partialSum;
        int v = p[t] + p[t + 32];
        p[t] = v;
        __syncwarp();
#pragma unroll
        for (int s = 16; s > 0; s >>= 1) {
            if (t < s)
                v += p[t + s];
            __syncwarp();
            if (t < s)
                p[t] = v;
            __syncwarp();
        }
        if (t == 0)
            partial[blockIdx.x] = v;
    }
}
