// ex12, part `constant`, SLOW (reference/slow): correct, the mask in constant
// memory, but every thread walks the taps starting from its own one, so that
// at each step the 32 threads of a warp read 16 different F elements (one per
// column of the block). Constant memory serves a warp one address at a time:
// 16 passes where a broadcast takes 1.
#define TILE 16
#define MAX_MASK_RADIUS 3

__constant__ float F[(2 * MAX_MASK_RADIUS + 1) * (2 * MAX_MASK_RADIUS + 1)];

extern "C" __global__ void conv2d_constant(const float *in, float *out, int r, int width, int height)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= height || col >= width)
        return;
    int w = 2 * r + 1, taps = w * w;
    float sum = 0.0f;
    for (int s = 0; s < taps; s++) {
        int k = (s + threadIdx.x) % taps; // a different tap for every column of the block
        int y = row - r + k / w, x = col - r + k % w;
        if (y >= 0 && y < height && x >= 0 && x < width)
            sum += F[k] * in[y * width + x];
    }
    out[row * width + col] = sum;
}
