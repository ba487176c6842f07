// 64-bit indexing: size_t arithmetic, a grid-stride loop, wide products.
extern "C" __global__ void k(const int *in_i, const float *in_f, const double *in_d, int *out_i, float *out_f, double *out_d, int n)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < (size_t)n; i += stride) {
        unsigned long long h = (unsigned long long)i * 0x9E3779B97F4A7C15ull;
        size_t j = (size_t)(h >> 40) % (size_t)n;
        long long w = (long long)in_i[i] * (long long)in_i[j] * 4097LL;
        out_i[i] = (int)(w >> 7) ^ (int)j;
        out_d[i] = (double)w;
    }
}
