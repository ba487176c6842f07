// Math functions and fast intrinsics, single and double precision. Results are
// compared with the GPU's bits (digests), not with the CPU: out_f holds the
// single-precision library functions, out_d the double ones, out_i the bits of
// the fast intrinsics (__expf, __sinf, ...: .approx instructions, which the
// simulator computes correctly rounded and a GPU within a few ulps).
extern "C" __global__ void k(const int *in_i, const float *in_f, const double *in_d, int *out_i, float *out_f, double *out_d, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = in_f[i];
    float ax = fabsf(x) + 0.25f;
    float f = sinf(x) + cosf(x) + expf(x) + logf(ax) + powf(ax, 1.7f) + erff(x) + rsqrtf(ax) + tanf(x) + atan2f(x, ax) +
              sqrtf(ax) + cbrtf(x) + exp2f(x) + log2f(ax) + log10f(ax) + tanhf(x) + asinf(x * 0.5f) + erfcf(x) +
              fmodf(x * 7.0f, ax) + hypotf(x, ax);
    float g = __expf(x) + __sinf(x) + __cosf(x) + __logf(ax) + __powf(ax, 1.3f) + __fdividef(x, ax) + __saturatef(x) +
              __tanf(x) + __log2f(ax) + __exp10f(x) + __frsqrt_rn(ax) + __fsqrt_rn(ax) + __fmaf_rn(x, ax, 1.0f);
    double d = in_d[i];
    double ad = fabs(d) + 0.25;
    double e = sin(d) + cos(d) + exp(d * 0.1) + log(ad) + pow(ad, 1.7) + erf(d) + rsqrt(ad) + sqrt(ad) + tanh(d) +
               atan2(d, ad) + cbrt(d) + log1p(ad) + expm1(d * 0.1) + floor(d) + ceil(d) + round(d) + trunc(d);
    out_i[i] = __float_as_int(g);
    out_f[i] = f + (float)(__float2int_rn(f * 100.0f) + __double2int_rz(e * 10.0));
    out_d[i] = e;
}
