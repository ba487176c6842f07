// hostile/printf-flood: counts right, and every thread prints 2000 lines: about
// 20 GB at the largest size. The GPU's printf buffer (1 MiB) drops the
// excess; the grader's captured output is capped.
extern "C" __global__ void pi_global(const float *x, const float *y, int n, unsigned int *hits)
{
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        if (x[i] * x[i] + y[i] * y[i] <= 1.0f)
            atomicAdd(hits, 1u);
    }
    int me = blockIdx.x * blockDim.x + threadIdx.x;
    for (int k = 0; k < 2000; k++)
        printf("thread %d is still here, line %d\n", me, k);
}
