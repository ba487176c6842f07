// Variant: off by one. `i < n - 1` never looks at the last point.
extern "C" __global__ void pi_global(const float *x, const float *y, int n, unsigned int *hits)
{
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n - 1; i += stride) {
        if (x[i] * x[i] + y[i] * y[i] <= 1.0f)
            atomicAdd(hits, 1u);
    }
}
