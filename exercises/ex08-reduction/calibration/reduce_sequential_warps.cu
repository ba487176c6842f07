// Style variant for ex08 `sequential` (measured checks): every warp reduces
// its 32 values with shuffles, the eight warp sums meet in shared memory, and
// warp 0 reduces them. No tree in shared memory at all; correct and without
// interleaved divergence: must pass `shared-tree` and the stand-in.
extern "C" __global__ void reduce_sequential(const int *in, int n, int *partial)
{
    __shared__ int warpSums[8];
    unsigned int t = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + t;
    int v = i < (unsigned int)n ? in[i] : 0;
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, offset);
    if ((t & 31) == 0)
        warpSums[t >> 5] = v;
    __syncthreads();
    if (t < 32) {
        v = t < 8 ? warpSums[t] : 0;
        for (int offset = 4; offset > 0; offset >>= 1)
            v += __shfl_down_sync(0xffffffffu, v, offset);
        if (t == 0)
            partial[blockIdx.x] = v;
    }
}
