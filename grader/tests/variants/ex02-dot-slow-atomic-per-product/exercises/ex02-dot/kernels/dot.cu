// Optional calibration variant for ex02 `dot` (not graded by `--sources
// reference/slow`; CALIBRATION.md says how to time it): correct, touches shared
// memory and has a barrier, but adds every product to the block's partial sum
// with a global atomicAdd (the "skip the reduction, just use atomics" mistake).
// Where it lands shows how much the register sum and the tree are worth.
extern "C" __global__ void dot(const float *a, const float *b, int n, float *partial)
{
    __shared__ float product[256];
    if (threadIdx.x == 0)
        partial[blockIdx.x] = 0.0f; // poisoned by the host; cleared before anyone adds
    __syncthreads();
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < (unsigned int)n; i += gridDim.x * blockDim.x) {
        product[threadIdx.x] = a[i] * b[i];
        atomicAdd(&partial[blockIdx.x], product[threadIdx.x]);
    }
}
