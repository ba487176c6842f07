// Double-precision atomicAdd (sm_60 and later) on global and shared memory.
// The inputs are multiples of 1/1024, so every order gives the same sum.
extern "C" __global__ void k(const int *in_i, const float *in_f, const double *in_d, int *out_i, float *out_f, double *out_d, int n)
{
    __shared__ double part;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x == 0)
        part = 0.0;
    __syncthreads();
    if (i < n) {
        atomicAdd(&out_d[0], in_d[i]);
        atomicAdd(&part, in_d[i] * 2.0);
        atomicAdd(&out_f[0], 0.25f);
    }
    __syncthreads();
    if (threadIdx.x == 0)
        out_d[1 + blockIdx.x] = part;
}
