// Variant: the block's counter in shared memory, updated with a shared
// atomicAdd inside the grid-stride loop for every hit, then one global update
// per block. Correct and coalesced; the branch in the loop lets the lanes
// drift apart under clang.
extern "C" __global__ void pi_shared(const float *x, const float *y, int n, unsigned int *hits)
{
    __shared__ unsigned int count;
    if (threadIdx.x == 0)
        count = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        float px = x[i], py = y[i];
        if (px * px + py * py <= 1.0f)
            atomicAdd(&count, 1u);
    }
    __syncthreads();
    if (threadIdx.x == 0)
        atomicAdd(hits, count);
}
