// ex12, part `constant`, a variant: the convolution as a signal-processing
// course writes it, out[row][col] = sum of F[r - di][r - dj] * in[row + di][col + dj]
// for di, dj in -r .. r: the mask flipped, a correlation's taps reversed.
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
    for (int di = -r; di <= r; di++) {
        for (int dj = -r; dj <= r; dj++) {
            int y = row + di, x = col + dj;
            if (y >= 0 && y < height && x >= 0 && x < width)
                sum += F[(r - di) * w + (r - dj)] * in[y * width + x];
        }
    }
    out[row * width + col] = sum;
}
