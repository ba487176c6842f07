// Style variant for ex05 (measured checks): the block fills its window with a
// block-stride loop (no special halo threads), then sums with a pointer walk.
// Correct and staged: must pass `few-global-loads-per-output` and the `share-of-copy` stand-in.
#define BLOCK_SIZE 512
#define RADIUS 3

extern "C" __global__ void stencil_1d(const int *__restrict__ in, int *__restrict__ out, int n)
{
    __shared__ int tmp[BLOCK_SIZE + 2 * RADIUS];
    int base = blockIdx.x * BLOCK_SIZE;
    int padded = n + 2 * RADIUS;
    for (int j = threadIdx.x; j < BLOCK_SIZE + 2 * RADIUS && base + j < padded; j += blockDim.x)
        tmp[j] = in[base + j];
    __syncthreads();
    int i = base + threadIdx.x;
    if (i < n) {
        const int *w = tmp + threadIdx.x;
        int sum = 0;
        for (int k = 0; k <= 2 * RADIUS; k++)
            sum += *w++;
        out[i] = sum / (2 * RADIUS + 1);
    }
}
