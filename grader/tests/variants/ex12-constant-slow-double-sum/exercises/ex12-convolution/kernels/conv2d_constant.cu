// Variant (slow candidate, a real mistake): the reference's loops and constant
// mask, but the sum kept in double "for accuracy": every tap converts the
// weight and the pixel to double and adds in double precision, at a fraction
// of the float rate.
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
    double sum = 0.0;
    for (int i = 0; i < w; i++) {
        int y = row - r + i;
        if (y < 0 || y >= height)
            continue;
        for (int j = 0; j < w; j++) {
            int x = col - r + j;
            if (x >= 0 && x < width)
                sum += (double)F[i * w + j] * (double)in[y * width + x];
        }
    }
    out[row * width + col] = (float)sum;
}
