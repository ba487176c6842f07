// Wrong-technique variant for ex05 (measured checks): fills the shared window
// behind a barrier and reads its own element back, but takes the neighbours
// from global memory. Correct, spells the technique: must fail `few-global-loads-per-output`.
#define BLOCK_SIZE 512
#define RADIUS 3

extern "C" __global__ void stencil_1d(const int *in, int *out, int n)
{
    __shared__ int tmp[BLOCK_SIZE + 2 * RADIUS];
    int i = blockIdx.x * BLOCK_SIZE + threadIdx.x;
    if (i < n + 2 * RADIUS)
        tmp[threadIdx.x] = in[i];
    if (threadIdx.x < 2 * RADIUS && i + BLOCK_SIZE < n + 2 * RADIUS)
        tmp[BLOCK_SIZE + threadIdx.x] = in[i + BLOCK_SIZE];
    __syncthreads();
    if (i < n) {
        int sum = tmp[threadIdx.x];
        for (int k = 1; k <= 2 * RADIUS; k++)
            sum += in[i + k];
        out[i] = sum / (2 * RADIUS + 1);
    }
}
