// Style variant of part `naive` (must pass): __restrict__, __ldg, one flat loop
// over the taps, the image index built once per row.
#define TILE 16
#define MAX_MASK_RADIUS 3

extern "C" __global__ void conv2d_naive(const float *__restrict__ in, const float *__restrict__ mask,
                                        float *__restrict__ out, int r, int width, int height)
{
    const int col = blockIdx.x * TILE + threadIdx.x;
    const int row = blockIdx.y * TILE + threadIdx.y;
    if (row < height && col < width) {
        const int w = 2 * r + 1;
        float sum = 0.0f;
        for (int k = 0; k < w * w; k++) {
            const int y = row - r + k / w, x = col - r + k % w;
            if (y >= 0 && y < height && x >= 0 && x < width)
                sum = fmaf(__ldg(&mask[k]), __ldg(&in[(size_t)y * width + x]), sum);
        }
        out[(size_t)row * width + col] = sum;
    }
}
