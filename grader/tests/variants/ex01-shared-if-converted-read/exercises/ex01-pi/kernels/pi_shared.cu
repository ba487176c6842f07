// ex01 `shared`: one round per grid-wide chunk of points; each round the block
// sums its 256 flags in a shared tree, and thread 0 keeps the running count.
#define THREADS 256 // == blockDim.x, fixed by the host

extern "C" __global__ void pi_shared(const float *x, const float *y, int n, unsigned int *hits)
{
    __shared__ unsigned int cache[THREADS];
    unsigned int t = threadIdx.x;
    unsigned int total = 0;
    int stride = gridDim.x * blockDim.x;
    for (int base = blockIdx.x * blockDim.x; base < n; base += stride) {
        int i = base + t;
        cache[t] = (i < n && x[i] * x[i] + y[i] * y[i] <= 1.0f) ? 1u : 0u;
        __syncthreads();
        for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
            if (t < s)
                cache[t] += cache[t + s];
            __syncthreads();
        }
        // Only thread 0 reads the round's sum; the others go on to the next round.
        if (t == 0)
            total += cache[0];
    }
    if (t == 0)
        atomicAdd(hits, total);
}
