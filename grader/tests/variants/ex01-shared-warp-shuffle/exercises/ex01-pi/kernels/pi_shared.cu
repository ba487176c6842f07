// Variant (correct): each warp adds its threads' counts with shuffles, lane 0
// adds the warp's total to the shared counter, one global atomicAdd per block.
extern "C" __global__ void pi_shared(const float *x, const float *y, int n, unsigned int *hits)
{
    __shared__ unsigned int block_hits;
    if (threadIdx.x == 0)
        block_hits = 0;
    __syncthreads();

    unsigned int mine = 0;
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        mine += x[i] * x[i] + y[i] * y[i] <= 1.0f;
    for (int offset = 16; offset > 0; offset >>= 1)
        mine += __shfl_down_sync(0xffffffffu, mine, offset);
    if ((threadIdx.x & 31) == 0 && mine > 0)
        atomicAdd(&block_hits, mine);
    __syncthreads();

    if (threadIdx.x == 0 && block_hits > 0)
        atomicAdd(hits, block_hits);
}
