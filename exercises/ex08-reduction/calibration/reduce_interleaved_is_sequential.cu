// Wrong-technique variant for ex08 `interleaved` (measured checks): correct,
// shared memory and barriers, but the tree is sequential addressing
// (`t < stride`) under the interleaved kernel's name. It scores 10/10 on
// spelling checks; the measured `shared-tree` check must fail it.
extern "C" __global__ void reduce_interleaved(const int *in, int n, int *partial)
{
    __shared__ int partialSum[256];
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
