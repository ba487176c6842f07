// Wrong technique for part `constant` (must fail `mask-in-constant`): the mask
// array declared `__device__` instead of `__constant__`. The grader's copy
// still lands in it and the result is right, but every tap reads the mask from
// global memory, as part `naive` does.
#define TILE 16
#define MAX_MASK_RADIUS 3

__device__ float F[(2 * MAX_MASK_RADIUS + 1) * (2 * MAX_MASK_RADIUS + 1)];

extern "C" __global__ void conv2d_constant(const float *in, float *out, int r, int width, int height)
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
                sum += F[i * w + j] * in[y * width + x];
        }
    }
    out[row * width + col] = sum;
}
