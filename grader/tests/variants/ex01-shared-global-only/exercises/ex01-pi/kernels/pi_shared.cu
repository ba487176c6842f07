// Variant: global where shared was asked. The `shared` part counts with one
// global atomicAdd per hit, exactly like `global`; correct but no shared counter.
extern "C" __global__ void pi_shared(const float *x, const float *y, int n, unsigned int *hits)
{
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        if (x[i] * x[i] + y[i] * y[i] <= 1.0f)
            atomicAdd(hits, 1u);
    }
}
