// Variant: the window filled in a contiguous chunk of four inputs per thread
// (the first 130 threads), as one would split work on a CPU: lanes read
// addresses 16 bytes apart, 16 sectors per warp request where 32 threads
// copying neighbouring inputs need 4. Staged and right; the fill is uncoalesced.
#define BLOCK_SIZE 512
#define RADIUS 3
#define CHUNK 4

extern "C" __global__ void stencil_1d(const int *in, int *out, int n)
{
    __shared__ int tmp[BLOCK_SIZE + 2 * RADIUS];
    int base = blockIdx.x * BLOCK_SIZE;
    int padded = n + 2 * RADIUS;
    int t = threadIdx.x;
    for (int c = 0; c < CHUNK; c++) {
        int j = t * CHUNK + c;
        if (j < BLOCK_SIZE + 2 * RADIUS && base + j < padded)
            tmp[j] = in[base + j];
    }
    __syncthreads();
    int i = base + t;
    if (i < n) {
        int sum = 0;
        for (int k = 0; k <= 2 * RADIUS; k++)
            sum += tmp[t + k];
        out[i] = sum / (2 * RADIUS + 1);
    }
}
