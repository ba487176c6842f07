// Elementwise kernels and arithmetic coverage.
extern "C" __global__ void vec_add(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}

extern "C" __global__ void saxpy_grid_stride(float alpha, const float *x, float *y, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        y[i] = alpha * x[i] + y[i];
}

extern "C" __global__ void int_ops(const int *a, const int *b, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int x = a[i], y = b[i];
    int k = i * 16;
    out[k + 0] = x / (y == 0 ? 1 : y);
    out[k + 1] = x % (y == 0 ? 1 : y);
    out[k + 2] = (int)((unsigned)x / ((unsigned)y | 1u));
    out[k + 3] = x >> (y & 31);
    out[k + 4] = (int)((unsigned)x >> (y & 31));
    out[k + 5] = __popc(x) + __clz(y);
    out[k + 6] = __brev(x);
    out[k + 7] = min(x, y) - max(x, y);
    out[k + 8] = __mulhi(x, y);
    out[k + 9] = (int)(((long long)x * y) >> 7);
    out[k + 10] = abs(x) ^ ~y;
    out[k + 11] = (x & 0xff00) | ((y >> 3) & 0x1f);
    out[k + 12] = (short)x + (signed char)y;
    out[k + 13] = __byte_perm(x, y, 0x5140);
    out[k + 14] = __ffs(x) + __umulhi((unsigned)x, (unsigned)y);
    out[k + 15] = __sad(x, y, 3) + __usad((unsigned)x, (unsigned)y, 1u);
}

extern "C" __global__ void float_ops(const float *a, const float *b, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float x = a[i], y = b[i];
    int k = i * 12;
    out[k + 0] = x / y;
    out[k + 1] = sqrtf(fabsf(x));
    out[k + 2] = fmaf(x, y, 1.5f);
    out[k + 3] = fminf(x, y) + fmaxf(x, y);
    out[k + 4] = (float)(int)x + (float)(unsigned)fabsf(y);
    out[k + 5] = floorf(x) + ceilf(y) + truncf(x) + rintf(y);
    out[k + 6] = __fadd_rz(x, y);
    out[k + 7] = __fmul_rd(x, y);
    out[k + 8] = (float)((double)x * (double)y + 1.0);
    out[k + 9] = copysignf(x, y);
    out[k + 10] = (x < y) ? x : -y;
    out[k + 11] = __int_as_float(__float_as_int(x) ^ 0x1);
}

extern "C" __global__ void wide_ops(const long long *a, const unsigned char *c, long long *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    long long x = a[i];
    unsigned char ch = c[i];
    int k = i * 6;
    out[k + 0] = x * 3 - (x >> 5);
    out[k + 1] = (long long)((unsigned long long)x / 7ull);
    out[k + 2] = x % 1000;
    out[k + 3] = (ch == 'A') + (ch == 'C') * 2 + (ch == 'G') * 3 + (ch == 'T') * 4;
    out[k + 4] = (long long)(double)x;
    out[k + 5] = __double_as_longlong(sqrt((double)(x & 0xffff)));
}
