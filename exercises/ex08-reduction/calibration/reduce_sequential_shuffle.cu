// Style variant for ex08 `sequential` (measured checks): sequential addressing
// in shared memory down to one warp, then warp shuffles. Correct, whole warps
// busy or idle: must pass `shared-tree` and the `faster-than-interleaved` stand-in.
extern "C" __global__ void reduce_sequential(const int *in, int n, int *partial)
{
    __shared__ int partialSum[256];
    unsigned int t = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + t;
    partialSum[t] = i < (unsigned int)n ? in[i] : 0;
    for (unsigned int stride = blockDim.x / 2; stride >= 32; stride >>= 1) {
        __syncthreads();
        if (t < stride)
            partialSum[t] += partialSum[t + stride];
    }
    if (t < 32) {
        int v = partialSum[t];
        for (int offset = 16; offset > 0; offset >>= 1)
            v += __shfl_down_sync(0xffffffffu, v, offset);
        if (t == 0)
            partial[blockIdx.x] = v;
    }
}
