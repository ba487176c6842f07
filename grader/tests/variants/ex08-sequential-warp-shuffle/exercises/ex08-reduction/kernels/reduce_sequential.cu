// Variant (correct): sequential addressing down to 64 elements, then the last
// warp finishes with shuffles.
#define THREADS 256
extern "C" __global__ void reduce_sequential(const int *in, int n, int *partial)
{
    __shared__ int partialSum[THREADS];
    unsigned int t = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + t;
    partialSum[t] = i < (unsigned int)n ? in[i] : 0;
    for (unsigned int stride = blockDim.x / 2; stride > 32; stride >>= 1) {
        __syncthreads();
        if (t < stride)
            partialSum[t] += partialSum[t + stride];
    }
    __syncthreads();
    if (t < 32) {
        int v = partialSum[t] + partialSum[t + 32];
        for (int offset = 16; offset > 0; offset >>= 1)
            v += __shfl_down_sync(0xffffffffu, v, offset);
        if (t == 0)
            partial[blockIdx.x] = v;
    }
}
