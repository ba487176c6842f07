// Variant: the block's 512 inputs seen as a 16 x 32 tile and filled down its
// columns (thread t copies element (t % 16) * 32 + t / 16), then the halo by
// the first threads: lanes read inputs 32 apart, a sector each. Staged and
// right; the fill is uncoalesced.
#define BLOCK_SIZE 512
#define RADIUS 3

extern "C" __global__ void stencil_1d(const int *in, int *out, int n)
{
    __shared__ int tmp[BLOCK_SIZE + 2 * RADIUS];
    int base = blockIdx.x * BLOCK_SIZE;
    int padded = n + 2 * RADIUS;
    int t = threadIdx.x;
    int j = (t % 16) * 32 + t / 16;
    if (base + j < padded)
        tmp[j] = in[base + j];
    if (t < 2 * RADIUS && base + BLOCK_SIZE + t < padded)
        tmp[BLOCK_SIZE + t] = in[base + BLOCK_SIZE + t];
    __syncthreads();
    int i = base + t;
    if (i < n) {
        int sum = 0;
        for (int k = 0; k <= 2 * RADIUS; k++)
            sum += tmp[t + k];
        out[i] = sum / (2 * RADIUS + 1);
    }
}
