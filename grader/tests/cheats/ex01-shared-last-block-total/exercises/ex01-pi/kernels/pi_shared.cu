// Honest (the CUDA Programming Guide's "last block" pattern): each block
// adds its count to a __device__ total; the last block to finish writes the
// total to *hits and resets the total and its ticket for the next launch.
// It relies on the README's promise that *hits starts at zero only as far as
// it overwrites it: correct on every launch.
__device__ unsigned int total, ticket;

extern "C" __global__ void pi_shared(const float *x, const float *y, int n, unsigned int *hits)
{
    __shared__ unsigned int block_hits;
    __shared__ bool last;
    if (threadIdx.x == 0)
        block_hits = 0;
    __syncthreads();
    unsigned int mine = 0;
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        if (x[i] * x[i] + y[i] * y[i] <= 1.0f)
            mine++;
    if (mine > 0)
        atomicAdd(&block_hits, mine);
    __syncthreads();
    if (threadIdx.x == 0) {
        atomicAdd(&total, block_hits);
        __threadfence();
        last = atomicAdd(&ticket, 1) == gridDim.x - 1;
    }
    __syncthreads();
    if (last && threadIdx.x == 0) {
        *hits = *(volatile unsigned int *)&total;
        total = 0;
        ticket = 0;
    }
}
