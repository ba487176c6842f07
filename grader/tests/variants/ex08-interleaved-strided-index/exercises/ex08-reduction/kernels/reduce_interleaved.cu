// Variant (correct): interleaved addressing written the other classic way,
// index = 2 * stride * t (no modulo; the busy threads are packed, but the
// shared accesses are strided: bank conflicts instead of divergence).
#define THREADS 256
extern "C" __global__ void reduce_interleaved(const int *in, int n, int *partial)
{
    __shared__ int partialSum[THREADS];
    unsigned int t = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + t;
    partialSum[t] = i < (unsigned int)n ? in[i] : 0;
    for (unsigned int stride = 1; stride < blockDim.x; stride *= 2) {
        __syncthreads();
        unsigned int index = 2 * stride * t;
        if (index < blockDim.x)
            partialSum[index] += partialSum[index + stride];
    }
    if (t == 0)
        partial[blockIdx.x] = partialSum[0];
}
