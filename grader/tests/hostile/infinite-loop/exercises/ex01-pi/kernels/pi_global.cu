// hostile/infinite-loop: counts right, then spins forever on a counter that never
// reaches its target (volatile, so the compiler keeps the loop).
extern "C" __global__ void pi_global(const float *x, const float *y, int n, unsigned int *hits)
{
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        if (x[i] * x[i] + y[i] * y[i] <= 1.0f)
            atomicAdd(hits, 1u);
    }
    volatile unsigned int *counter = hits;
    while (*counter != 0xFFFFFFFFu) {
    }
}
