// The block's count merged with a compare-and-swap loop instead of atomicAdd:
// the first read is plain, and every attempt retries with the value the CAS
// returned, so no update is lost. Correct.
extern "C" __global__ void pi_shared(const float *x, const float *y, int n, unsigned int *hits)
{
    __shared__ unsigned int block_hits;
    if (threadIdx.x == 0)
        block_hits = 0;
    __syncthreads();

    unsigned int mine = 0;
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        if (x[i] * x[i] + y[i] * y[i] <= 1.0f)
            mine++;
    }
    if (mine > 0)
        atomicAdd(&block_hits, mine);
    __syncthreads();

    if (threadIdx.x == 0) {
        unsigned int old = *hits, assumed;
        do {
            assumed = old;
            old = atomicCAS(hits, assumed, assumed + block_hits);
        } while (old != assumed);
    }
}
