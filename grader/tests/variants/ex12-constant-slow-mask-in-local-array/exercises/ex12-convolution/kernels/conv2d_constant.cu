// Variant (slow, a real mistake): each thread first copies the mask from
// constant memory into its own array "to have it in registers". The radius is
// only known at run time, so the array is indexed at run time and lives in
// local memory: every tap reads its weight from a per-thread copy (a 128-byte
// load per warp, 49 copies of the mask per thread) instead of one broadcast.
#define TILE 16
#define MAX_MASK_RADIUS 3
#define MAX_W (2 * MAX_MASK_RADIUS + 1)

__constant__ float F[MAX_W * MAX_W];

extern "C" __global__ void conv2d_constant(const float *in, float *out, int r, int width, int height)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= height || col >= width)
        return;
    int w = 2 * r + 1;
    float mask[MAX_W * MAX_W];
    for (int k = 0; k < w * w; k++)
        mask[k] = F[k];
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
