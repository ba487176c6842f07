// Each block counts its hits in shared memory, then thread 0 publishes the
// block's count with a plain read-modify-write of the global counter. Blocks
// run at the same time on a GPU: two of them read the same old value and one
// update is lost (the simulator, which runs blocks one after another, gets the
// right count, and must still call it a race).
extern "C" __global__ void pi_global(const float *x, const float *y, int n, unsigned int *hits)
{
    __shared__ unsigned int local;
    if (threadIdx.x == 0)
        local = 0;
    __syncthreads();

    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        if (x[i] * x[i] + y[i] * y[i] <= 1.0f)
            atomicAdd(&local, 1u);
    }
    __syncthreads();

    if (threadIdx.x == 0)
        *hits += local;
}
