// hostile/shared-too-big: 400 000 bytes of static __shared__ memory; a block
// may have 48 KiB. Compiles (PTX has no limit), but cannot load or launch.
extern "C" __global__ void pi_shared(const float *x, const float *y, int n, unsigned int *hits)
{
    __shared__ float big[100000];
    __shared__ unsigned int block_hits;
    if (threadIdx.x == 0)
        block_hits = 0;
    for (int k = threadIdx.x; k < 100000; k += blockDim.x)
        big[k] = 0.0f;
    __syncthreads();

    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        if (x[i] * x[i] + y[i] * y[i] <= 1.0f + big[i % 100000])
            atomicAdd(&block_hits, 1u);
    }
    __syncthreads();
    if (threadIdx.x == 0)
        atomicAdd(hits, block_hits);
}
