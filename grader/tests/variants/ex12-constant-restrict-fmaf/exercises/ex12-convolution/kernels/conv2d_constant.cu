// Variant (correct): the reference's loops with __restrict__ on both pointers
// and fmaf spelled out.
#define TILE 16
#define MAX_MASK_RADIUS 3

__constant__ float F[(2 * MAX_MASK_RADIUS + 1) * (2 * MAX_MASK_RADIUS + 1)];

extern "C" __global__ void conv2d_constant(const float *__restrict__ in, float *__restrict__ out, int r, int width,
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
                sum = fmaf(F[i * w + j], in[y * width + x], sum);
        }
    }
    out[row * width + col] = sum;
}
