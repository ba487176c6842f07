// Variant: hard-coded answer. Thread 0 writes n * pi / 4, rounded: close to
// every count, equal to none.
extern "C" __global__ void pi_global(const float *x, const float *y, int n, unsigned int *hits)
{
    if (blockIdx.x == 0 && threadIdx.x == 0)
        *hits = (unsigned int)(n * 0.78539816339744830962 + 0.5);
}
