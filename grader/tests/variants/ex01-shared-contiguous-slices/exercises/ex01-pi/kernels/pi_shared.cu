// Variant (right count, uncoalesced): each thread counts its own contiguous
// slice of ceil(n / threads) points, then the notes' shared counter. With one
// point per thread the slices are the grid-stride loop; with four, the 32
// lanes of a warp read floats 16 bytes apart (16 sectors per request).
extern "C" __global__ void pi_shared(const float *x, const float *y, int n, unsigned int *hits)
{
    __shared__ unsigned int block_hits;
    if (threadIdx.x == 0)
        block_hits = 0;
    __syncthreads();

    unsigned int threads = gridDim.x * blockDim.x;
    unsigned int per = ((unsigned int)n + threads - 1) / threads;
    unsigned int first = (blockIdx.x * blockDim.x + threadIdx.x) * per;
    unsigned int end = min(first + per, (unsigned int)n);
    unsigned int mine = 0;
    for (unsigned int i = first; i < end; i++)
        mine += x[i] * x[i] + y[i] * y[i] <= 1.0f;
    if (mine > 0)
        atomicAdd(&block_hits, mine);
    __syncthreads();
    if (threadIdx.x == 0)
        atomicAdd(hits, block_hits);
}
