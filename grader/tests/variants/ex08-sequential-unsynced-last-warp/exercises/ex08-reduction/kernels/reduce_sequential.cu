// Variant: the old "warp-synchronous" tail. Below 32 the steps run without any
// barrier and without volatile, trusting the warp to run in lockstep: reads of
// partialSum[t + s] race with the writes of other lanes.
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
        for (unsigned int s = 32; s > 0; s >>= 1)
            partialSum[t] += partialSum[t + s];
    }
    if (t == 0)
        partial[blockIdx.x] = partialSum[0];
}
