// hostile/wrong-param-type: `float n` instead of `int n`: the int's bits read as
// a float.
extern "C" __global__ void pi_global(const float *x, const float *y, float n, unsigned int *hits)
{
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        if (x[i] * x[i] + y[i] * y[i] <= 1.0f)
            atomicAdd(hits, 1u);
    }
}
