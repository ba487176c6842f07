// hostile/wrong-param-count: `n` dropped: the kernel loops to a fixed 1000.
extern "C" __global__ void pi_global(const float *x, const float *y, unsigned int *hits)
{
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < 1000; i += stride) {
        if (x[i] * x[i] + y[i] * y[i] <= 1.0f)
            atomicAdd(hits, 1u);
    }
}
