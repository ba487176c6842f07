// Variant (slow candidate, a real mistake): the mask in constant memory, but
// each row of threads starts at its own mask row, i = (ii + threadIdx.y) % w,
// "so that the threads do not all read the same weight at once". The same
// weight at once is what constant memory serves best (a broadcast); a warp
// holds two rows of threads, so every tap now reads two weights: two
// constant-cache passes per load where one would do.
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
    for (int ii = 0; ii < w; ii++) {
        int i = (ii + threadIdx.y) % w; // a different mask row for each row of the block
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
