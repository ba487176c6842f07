// Wrong technique for part `tiled` (must fail `few-global-loads-per-output`): PMPP's
// "tiled convolution using caches for halo cells". Only the block's own 16 x 16
// pixels go to shared memory; taps in the halo are read from global memory
// (through L1 and L2). Correct, and the halo is not staged: about 8 global
// loads per output on the measured image instead of 1.6.
#define TILE 16
#define MAX_MASK_RADIUS 3

__constant__ float F[(2 * MAX_MASK_RADIUS + 1) * (2 * MAX_MASK_RADIUS + 1)];

extern "C" __global__ void conv2d_tiled(const float *in, float *out, int r, int width, int height)
{
    __shared__ float tile[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y;
    int col = blockIdx.x * TILE + threadIdx.x;
    tile[threadIdx.y][threadIdx.x] = (row < height && col < width) ? in[row * width + col] : 0.0f;
    __syncthreads();
    if (row >= height || col >= width)
        return;
    int w = 2 * r + 1;
    float sum = 0.0f;
    for (int i = 0; i < w; i++) {
        for (int j = 0; j < w; j++) {
            int ty = (int)threadIdx.y - r + i, tx = (int)threadIdx.x - r + j;
            int y = row - r + i, x = col - r + j;
            if (ty >= 0 && ty < TILE && tx >= 0 && tx < TILE)
                sum += F[i * w + j] * tile[ty][tx];
            else if (y >= 0 && y < height && x >= 0 && x < width)
                sum += F[i * w + j] * in[y * width + x];
        }
    }
    out[row * width + col] = sum;
}
