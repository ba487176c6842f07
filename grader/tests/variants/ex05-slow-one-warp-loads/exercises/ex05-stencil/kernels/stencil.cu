// Variant (slow, a real mistake): the first warp stages the block's whole
// window (518 values, 17 rounds of 32) while the other fifteen warps wait at
// the barrier. Each input is read once and coalesced, so the structure is
// right, but one warp in sixteen keeps the block's loads in flight.
#define BLOCK_SIZE 512
#define RADIUS 3

extern "C" __global__ void stencil_1d(const int *in, int *out, int n)
{
    __shared__ int tmp[BLOCK_SIZE + 2 * RADIUS];
    int base = blockIdx.x * BLOCK_SIZE;
    int padded = n + 2 * RADIUS;
    int t = threadIdx.x;

    if (t < 32) {
        for (int j = t; j < BLOCK_SIZE + 2 * RADIUS; j += 32)
            if (base + j < padded)
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
