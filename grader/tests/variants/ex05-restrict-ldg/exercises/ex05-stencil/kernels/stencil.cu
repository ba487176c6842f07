// Variant (correct): __restrict__ and __ldg, one staging loop over the window.
#define BLOCK_SIZE 512
#define RADIUS 3
extern "C" __global__ void stencil_1d(const int *__restrict__ in, int *__restrict__ out, int n)
{
    __shared__ int tmp[BLOCK_SIZE + 2 * RADIUS];
    int base = blockIdx.x * BLOCK_SIZE;
    int padded = n + 2 * RADIUS;
    for (int j = threadIdx.x; j < BLOCK_SIZE + 2 * RADIUS; j += BLOCK_SIZE)
        if (base + j < padded)
            tmp[j] = __ldg(&in[base + j]);
    __syncthreads();
    int t = threadIdx.x;
    if (base + t < n) {
        int sum = 0;
#pragma unroll
        for (int k = 0; k <= 2 * RADIUS; k++)
            sum += tmp[t + k];
        out[base + t] = sum / (2 * RADIUS + 1);
    }
}
