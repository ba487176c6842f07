// Variant (correct): the seven terms added by hand through a pointer into the
// shared window, no loops.
#define BLOCK_SIZE 512
#define RADIUS 3
extern "C" __global__ void stencil_1d(const int *in, int *out, int n)
{
    __shared__ int tmp[BLOCK_SIZE + 2 * RADIUS];
    int base = blockIdx.x * BLOCK_SIZE;
    int padded = n + 2 * RADIUS;
    int t = threadIdx.x;
    if (base + t < padded)
        tmp[t] = in[base + t];
    if (t < 2 * RADIUS && base + BLOCK_SIZE + t < padded)
        tmp[BLOCK_SIZE + t] = in[base + BLOCK_SIZE + t];
    __syncthreads();
    if (base + t < n) {
        const int *w = tmp + t;
        out[base + t] = (w[0] + w[1] + w[2] + w[3] + w[4] + w[5] + w[6]) / 7;
    }
}
