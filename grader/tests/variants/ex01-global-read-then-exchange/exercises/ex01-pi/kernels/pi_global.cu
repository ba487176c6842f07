// Each thread counts its hits in a register, then adds them to the global
// counter by reading it and exchanging in the sum: the read and the exchange
// are two steps, and another thread's update between them is lost on a GPU.
extern "C" __global__ void pi_global(const float *x, const float *y, int n, unsigned int *hits)
{
    unsigned int mine = 0;
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        if (x[i] * x[i] + y[i] * y[i] <= 1.0f)
            mine++;
    }
    if (mine > 0) {
        unsigned int total = *hits;
        atomicExch(hits, total + mine);
    }
}
