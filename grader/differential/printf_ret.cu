// printf from a few threads. Its return value goes to out_f on its own, so that
// a difference there (the simulator returns the bytes printed; the Programming
// Guide says the number of arguments parsed) does not hide the rest.
extern "C" __global__ void k(const int *in_i, const float *in_f, const double *in_d, int *out_i, float *out_f, double *out_d, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int r = 0;
    if (i % 250 == 0)
        r = printf("thread %d: in_i=%d in_f=%.3f\n", i, in_i[i], in_f[i]);
    out_i[i] = in_i[i] * 3;
    out_f[i] = (float)r;
}
