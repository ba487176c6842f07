// ex08 `sequential`, broken: each warp sums its elements with shuffles and its
// lane 0 adds the warp's sum to a shared total with atomicAdd, but there is no
// __syncthreads() between those atomics and thread 0's read of the total: thread
// 0 writes the block's partial sum while later warps are still adding to it.
#define THREADS 256 // == blockDim.x, fixed by the host

extern "C" __global__ void reduce_sequential(const int *in, int n, int *partial)
{
    __shared__ int total;
    unsigned int t = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + t;
    int v = i < (unsigned int)n ? in[i] : 0;
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, offset);
    if (t == 0)
        total = 0;
    __syncthreads();
    if ((t & 31) == 0)
        atomicAdd(&total, v);
    if (t == 0)
        partial[blockIdx.x] = total;
}
