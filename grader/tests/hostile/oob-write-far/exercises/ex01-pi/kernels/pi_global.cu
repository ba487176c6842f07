// hostile/oob-write-far: counts right, then thread 0 writes 4 TiB past `hits`:
// an illegal address on a GPU, which ends this part's process.
extern "C" __global__ void pi_global(const float *x, const float *y, int n, unsigned int *hits)
{
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        if (x[i] * x[i] + y[i] * y[i] <= 1.0f)
            atomicAdd(hits, 1u);
    }
    if (blockIdx.x == 0 && threadIdx.x == 0)
        hits[1ull << 40] = 1u;
}
