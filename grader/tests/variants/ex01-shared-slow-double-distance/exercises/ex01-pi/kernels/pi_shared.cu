// Variant (slow, a real mistake): the distance computed in double "for
// accuracy": both coordinates converted to double, squared and summed, then a
// double sqrt compared with 1.0. Right count and the reference's counting, but
// each point pays two conversions and a double square root.
extern "C" __global__ void pi_shared(const float *x, const float *y, int n, unsigned int *hits)
{
    __shared__ unsigned int block_hits;
    if (threadIdx.x == 0)
        block_hits = 0;
    __syncthreads();

    unsigned int mine = 0;
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        double dx = x[i], dy = y[i];
        if (sqrt(dx * dx + dy * dy) <= 1.0)
            mine++;
    }
    if (mine > 0)
        atomicAdd(&block_hits, mine);
    __syncthreads();

    if (threadIdx.x == 0)
        atomicAdd(hits, block_hits);
}
