// ex05 `stencil`, reference solution.
//
// `in` is padded: it holds n + 2*RADIUS elements, and out[i] is the mean of
// in[i .. i + 2*RADIUS] (the window centred on padded index i + RADIUS).
// In padded coordinates the block's window starts at its first output index,
// so tmp[j] = in[base + j] for j in 0 .. BLOCK_SIZE + 2*RADIUS: thread t loads
// tmp[t], and the first 2*RADIUS threads also load the halo past the block.
#define BLOCK_SIZE 512
#define RADIUS 3

extern "C" __global__ void stencil_1d(const int *in, int *out, int n)
{
    __shared__ int tmp[BLOCK_SIZE + 2 * RADIUS];
    int base = blockIdx.x * BLOCK_SIZE;
    int padded = n + 2 * RADIUS;
    int t = threadIdx.x;

    // Stage: one coalesced load per thread, plus 2*RADIUS halo loads per block.
    if (base + t < padded)
        tmp[t] = in[base + t];
    if (t < 2 * RADIUS && base + BLOCK_SIZE + t < padded)
        tmp[BLOCK_SIZE + t] = in[base + BLOCK_SIZE + t];
    __syncthreads();

    // Compute from shared memory only: every input is read once from global
    // memory but used by 2*RADIUS+1 threads.
    int i = base + t;
    if (i < n) {
        int sum = 0;
#pragma unroll
        for (int k = 0; k <= 2 * RADIUS; k++)
            sum += tmp[t + k];
        out[i] = sum / (2 * RADIUS + 1);
    }
}
