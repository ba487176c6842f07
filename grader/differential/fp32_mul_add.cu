// A float product used twice, then added and subtracted: the PTX ISA lets
// ptxas fuse a product into a sum, but one used twice it rounds first (FMUL,
// then FADD, on an H100); contraction.cu has the product read once.
extern "C" __global__ void k(const int *in_i, const float *in_f, const double *in_d, int *out_i, float *out_f, double *out_d, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float x = in_f[i], y = in_f[(i + 7) % n] * 3.0f, z = in_f[(i + 13) % n];
    float m = x * y;
    out_f[i] = m + z;
    out_d[i] = (double)(m - z);
    out_i[i] = __float_as_int(m);
}
