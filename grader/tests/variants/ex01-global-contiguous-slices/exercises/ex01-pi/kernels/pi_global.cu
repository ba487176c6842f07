// Variant: each thread counts its own contiguous slice of ceil(n / threads)
// points, one global atomicAdd per hit: the right count, but neighbouring
// threads read points a slice apart, so the loads of x and y are uncoalesced.
extern "C" __global__ void pi_global(const float *x, const float *y, int n, unsigned int *hits)
{
    int threads = gridDim.x * blockDim.x;
    int per = (n + threads - 1) / threads;
    int first = (blockIdx.x * blockDim.x + threadIdx.x) * per;
    for (int i = first; i < first + per && i < n; i++)
        if (x[i] * x[i] + y[i] * y[i] <= 1.0f)
            atomicAdd(hits, 1u);
}
