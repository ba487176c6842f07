// Variant: thread 0 clears the block's counter, but no barrier separates that
// store from the other threads' atomicAdd: a plain write racing atomics. On a
// GPU warp 0 usually clears before the other warps add, so it passes by luck.
extern "C" __global__ void pi_shared(const float *x, const float *y, int n, unsigned int *hits)
{
    __shared__ unsigned int block_hits;
    if (threadIdx.x == 0)
        block_hits = 0;

    unsigned int mine = 0;
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        if (x[i] * x[i] + y[i] * y[i] <= 1.0f)
            mine++;
    }
    if (mine > 0)
        atomicAdd(&block_hits, mine);
    __syncthreads();

    if (threadIdx.x == 0)
        atomicAdd(hits, block_hits);
}
