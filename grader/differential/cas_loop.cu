// The Programming Guide's atomicCAS loop: a float maximum (global) and a product
// modulo a prime (shared), each a plain read then atomicCAS until it sticks.
__device__ float atomic_max_float(float *addr, float v)
{
    int *a = (int *)addr;
    int old = *a;
    while (__int_as_float(old) < v) {
        int assumed = old;
        old = atomicCAS(a, assumed, __float_as_int(v));
        if (old == assumed)
            break;
    }
    return __int_as_float(old);
}

extern "C" __global__ void k(const int *in_i, const float *in_f, const double *in_d, int *out_i, float *out_f, double *out_d, int n)
{
    __shared__ unsigned prod;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x == 0)
        prod = 1;
    __syncthreads();
    if (i < n) {
        atomic_max_float(&out_f[0], in_f[i]);
        unsigned m = (unsigned)(in_i[i] + 1001);
        unsigned old = prod, assumed;
        do {
            assumed = old;
            old = atomicCAS(&prod, assumed, (unsigned)((assumed * (unsigned long long)m) % 1000003u));
        } while (old != assumed);
    }
    __syncthreads();
    if (threadIdx.x == 0)
        out_i[blockIdx.x] = (int)prod;
}
