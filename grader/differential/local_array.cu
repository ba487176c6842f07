// A per-thread array indexed at run time (local memory): insertion sort of 16
// values, then a data-dependent lookup.
extern "C" __global__ void k(const int *in_i, const float *in_f, const double *in_d, int *out_i, float *out_f, double *out_d, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int a[16];
    for (int k = 0; k < 16; k++)
        a[k] = in_i[(i + k * 37) % n];
    for (int k = 1; k < 16; k++) {
        int x = a[k], j = k - 1;
        while (j >= 0 && a[j] > x) {
            a[j + 1] = a[j];
            j--;
        }
        a[j + 1] = x;
    }
    out_i[i] = a[(in_i[i] + 1000) & 15];
    out_f[i] = (float)(a[15] - a[0]);
}
