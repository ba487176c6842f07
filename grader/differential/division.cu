// Division and remainder by run-time values: signed, unsigned, 64-bit, and
// IEEE float and double division (never by zero).
extern "C" __global__ void k(const int *in_i, const float *in_f, const double *in_d, int *out_i, float *out_f, double *out_d, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int a = in_i[i], b = in_i[(i + 1) % n];
    if (b == 0)
        b = 7;
    unsigned ua = (unsigned)a * 2654435761u, ub = (unsigned)b | 1u;
    long long la = (long long)a * 1000003LL * a, lb = (long long)b * 31 + (b > 0 ? 1 : -1);
    out_i[i] = a / b + (a % b) * 1000 + (int)(ua / ub) + (int)(ua % ub);
    out_d[i] = (double)(la / lb) + (double)(la % lb) + in_d[i] / (in_d[(i + 3) % n] + 16.5);
    out_f[i] = in_f[i] / (in_f[(i + 1) % n] + 2.0f) + sqrtf(fabsf(in_f[i]));
}
