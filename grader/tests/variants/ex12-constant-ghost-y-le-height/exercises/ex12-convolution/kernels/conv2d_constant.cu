// ex12, part `constant`, a variant: the taps' row tested with `y <= height`
// (one row too many: row `height`, past the end of `in`).
//
//     out[row][col] = sum over i, j in -r..r of  F[(i + r) * (2r + 1) + (j + r)] * in[row + i][col + j]
//
// with in[y][x] = 0 outside the image. The grader writes the (2r + 1)^2 mask
// values into F before the launch (cudaMemcpyToSymbol); the rest of F is 0.
//
// Launch (fixed by the grader): blocks of 16 x 16 threads, a grid of
// ceil(width / 16) x ceil(height / 16) blocks; x covers the columns.
#define TILE 16
#define MAX_MASK_RADIUS 3

__constant__ float F[(2 * MAX_MASK_RADIUS + 1) * (2 * MAX_MASK_RADIUS + 1)];

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
        if (!(y >= 0 && y <= height))
            continue;
        for (int j = 0; j < w; j++) {
            int x = col - r + j;
            if (x >= 0 && x < width)
                sum += F[i * w + j] * in[y * width + x]; // every thread of a warp reads the same F[i * w + j]
        }
    }
    out[row * width + col] = sum;
}
