// hostile/slow-kernel: counts right, then every thread runs 2^36 dependent
// multiply-adds: minutes on any GPU.
extern "C" __global__ void pi_global(const float *x, const float *y, int n, unsigned int *hits)
{
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        if (x[i] * x[i] + y[i] * y[i] <= 1.0f)
            atomicAdd(hits, 1u);
    }
    float acc = x[0];
    for (long long k = 0; k < (1LL << 36); k++)
        acc = acc * 1.0000001f + 1.0f;
    if (acc == 12345.0f)
        atomicAdd(hits, 1u);
}
