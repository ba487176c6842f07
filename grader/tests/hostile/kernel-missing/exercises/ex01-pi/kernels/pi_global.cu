// hostile/kernel-missing: the counting is in a __device__ function; no
// __global__ kernel at all.
__device__ unsigned int count_hits(const float *x, const float *y, int n)
{
    unsigned int c = 0;
    for (int i = 0; i < n; i++)
        c += x[i] * x[i] + y[i] * y[i] <= 1.0f;
    return c;
}
