// The yardstick of ex12's `constant::perf`: the reference's naive
// convolution, the mask read from global memory (a pointer argument), as in
// part `naive`. Same launch: 16 x 16 blocks, one output per thread.
extern "C" __global__ void conv2d_global_mask(const float *in, const float *mask, float *out, int r, int width,
                                              int height)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= height || col >= width)
        return;
    int w = 2 * r + 1;
    float sum = 0.0f;
    for (int i = 0; i < w; i++) {
        int y = row - r + i;
        if (y < 0 || y >= height)
            continue;
        for (int j = 0; j < w; j++) {
            int x = col - r + j;
            if (x >= 0 && x < width)
                sum += mask[i * w + j] * in[y * width + x];
        }
    }
    out[row * width + col] = sum;
}
