// hostile/launch-bounds-too-small: __launch_bounds__(128), but the grader launches 256
// threads per block: the launch cannot start.
extern "C" __global__ void __launch_bounds__(128) pi_global(const float *x, const float *y, int n, unsigned int *hits)
{
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        if (x[i] * x[i] + y[i] * y[i] <= 1.0f)
            atomicAdd(hits, 1u);
    }
}
