// ex01 `shared` with a warp vote: every lane of a warp tests one point, one
// __ballot_sync gathers the warp's 32 answers, and lane 0 counts them. The mask
// 0xffff names lanes 0..15 only, but all 32 lanes call the ballot: undefined
// behaviour (the vote of lanes 16..31 may be lost, or not).
extern "C" __global__ void pi_shared(const float *x, const float *y, int n, unsigned int *hits)
{
    __shared__ unsigned int block_hits;
    if (threadIdx.x == 0)
        block_hits = 0;
    __syncthreads();

    unsigned int mine = 0;
    int stride = gridDim.x * blockDim.x;
    // The bound is the same for the whole block, so every lane reaches every ballot.
    for (int base = blockIdx.x * blockDim.x; base < n; base += stride) {
        int i = base + threadIdx.x;
        bool hit = i < n && x[i] * x[i] + y[i] * y[i] <= 1.0f;
        unsigned int votes = __ballot_sync(0xffff, hit);
        if ((threadIdx.x & 31) == 0)
            mine += __popc(votes);
    }
    if (mine > 0)
        atomicAdd(&block_hits, mine);
    __syncthreads();

    if (threadIdx.x == 0)
        atomicAdd(hits, block_hits);
}
