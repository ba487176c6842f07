// Variant: off by one in the load (`i <= n`): the thread just past the end
// reads in[n], one element past the input, and adds it to its block's sum.
#define THREADS 256
extern "C" __global__ void reduce_interleaved(const int *in, int n, int *partial)
{
    __shared__ int partialSum[THREADS];
    unsigned int t = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + t;
    partialSum[t] = i <= (unsigned int)n ? in[i] : 0;
    for (unsigned int stride = 1; stride < blockDim.x; stride *= 2) {
        __syncthreads();
        if (t % (2 * stride) == 0)
            partialSum[t] += partialSum[t + stride];
    }
    if (t == 0)
        partial[blockIdx.x] = partialSum[0];
}
