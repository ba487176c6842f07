// Style variant of part `constant` (must pass): the loops clipped to the
// image instead of testing every tap, so that threads on the border start at
// another tap than their neighbours (their constant loads are not all
// broadcasts: a little over 1 pass per load on the measured image).
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
    int i0 = max(0, r - row), i1 = min(w, height - row + r);
    int j0 = max(0, r - col), j1 = min(w, width - col + r);
    float sum = 0.0f;
    for (int i = i0; i < i1; i++) {
        const float *line = in + (row - r + i) * width + (col - r);
        for (int j = j0; j < j1; j++)
            sum += F[i * w + j] * line[j];
    }
    out[row * width + col] = sum;
}
