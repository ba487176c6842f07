// Style variant for ex01 `shared` (measured checks): warps count with ballots,
// one shared atomic per warp, one global atomic per block. Correct, one global
// update per block: must pass `few-global-atomics-per-block` and the stand-in.
extern "C" __global__ void pi_shared(const float *x, const float *y, int n, unsigned int *hits)
{
    __shared__ unsigned int block_hits;
    if (threadIdx.x == 0)
        block_hits = 0;
    __syncthreads();
    for (int base = blockIdx.x * blockDim.x; base < n; base += gridDim.x * blockDim.x) {
        int i = base + threadIdx.x;
        bool hit = i < n && x[i] * x[i] + y[i] * y[i] <= 1.0f;
        unsigned int votes = __ballot_sync(0xffffffffu, hit);
        if ((threadIdx.x & 31) == 0)
            atomicAdd(&block_hits, __popc(votes));
    }
    __syncthreads();
    if (threadIdx.x == 0)
        atomicAdd(hits, block_hits);
}
