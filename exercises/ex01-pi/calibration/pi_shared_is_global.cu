// Wrong-technique variant for ex01 `shared` (measured checks): declares a
// shared counter and a barrier, but every hit goes straight to the global
// counter. Correct, spells the technique: must fail `few-global-atomics-per-block` and the stand-in.
extern "C" __global__ void pi_shared(const float *x, const float *y, int n, unsigned int *hits)
{
    __shared__ unsigned int block_hits;
    if (threadIdx.x == 0)
        block_hits = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        if (x[i] * x[i] + y[i] * y[i] <= 1.0f)
            atomicAdd(hits, 1u);
    __syncthreads();
    if (threadIdx.x == 0 && block_hits)
        atomicAdd(hits, block_hits);
}
