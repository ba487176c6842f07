// ex01 `global` that keeps state between launches: every block adds its hits
// to a __device__ total and takes a ticket; the block that draws the last
// ticket copies the total into *hits. Neither the total nor the ticket counter
// is ever reset, so only the module's first launch is right.
__device__ unsigned int total;
__device__ unsigned int tickets;

extern "C" __global__ void pi_global(const float *x, const float *y, int n, unsigned int *hits)
{
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        if (x[i] * x[i] + y[i] * y[i] <= 1.0f)
            atomicAdd(&total, 1u);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        if (atomicAdd(&tickets, 1u) == gridDim.x - 1)
            *hits = atomicAdd(&total, 0u);
    }
}
