// hostile/oob-read-far: reads 4 TiB past `x`: an illegal address on a GPU.
extern "C" __global__ void pi_global(const float *x, const float *y, int n, unsigned int *hits)
{
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        if (x[i + (1ll << 40)] * x[i] + y[i] * y[i] <= 1.0f)
            atomicAdd(hits, 1u);
    }
}
