// Calibration variant for ex01 `shared`: correct, and it counts in a shared
// counter behind barriers (so it passes the structure check), but every hit
// also does a global atomicAdd (of 0), so it keeps the serialization that the
// shared counter should remove. It must fail only `perf::faster-than-global-atomics`.
extern "C" __global__ void pi_shared(const float *x, const float *y, int n, unsigned int *hits)
{
    __shared__ unsigned int block_hits;
    if (threadIdx.x == 0)
        block_hits = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        if (x[i] * x[i] + y[i] * y[i] <= 1.0f) {
            atomicAdd(&block_hits, 1u);
            atomicAdd(hits, 0u);
        }
    }
    __syncthreads();
    if (threadIdx.x == 0)
        atomicAdd(hits, block_hits);
}
