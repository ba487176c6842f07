// Variant (slow candidate, a real mistake): the reference's loops and constant
// mask, but x and y swapped inside the block, "row i, column j" as in a
// matrix: threadIdx.x walks the rows. Every pixel is still computed once (the
// block is square), but a warp now covers 16 rows of 2 columns, so each tap's
// load touches 16 rows of the image (and each store 16 rows of `out`) where
// the reference's touches 2.
#define TILE 16
#define MAX_MASK_RADIUS 3

__constant__ float F[(2 * MAX_MASK_RADIUS + 1) * (2 * MAX_MASK_RADIUS + 1)];

extern "C" __global__ void conv2d_constant(const float *in, float *out, int r, int width, int height)
{
    int row = blockIdx.y * blockDim.y + threadIdx.x;
    int col = blockIdx.x * blockDim.x + threadIdx.y;
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
