// ex12, part `naive`, reference/slow: part `naive` has no timed check, so its
// slow variant is the wrong-technique one its structure check targets: correct,
// but the column taken from threadIdx.y and the row from threadIdx.x, so that a
// warp reads one pixel from each of 16 rows (16 sectors per request, not ~5).
#define TILE 16
#define MAX_MASK_RADIUS 3

extern "C" __global__ void conv2d_naive(const float *in, const float *mask, float *out, int r, int width, int height)
{
    int col = blockIdx.x * blockDim.x + threadIdx.y;
    int row = blockIdx.y * blockDim.y + threadIdx.x;
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
