// ex12, part `tiled`, SLOW (reference/slow): correct, the input tile and its
// halo in shared memory, but one thread of the block loads the whole tile,
// pixel by pixel, while the other 255 wait at the barrier. Each input pixel is
// still loaded about once (the measured loads per output are ideal), but the
// loads are one lane wide and one after the other.
#define TILE 16
#define MAX_MASK_RADIUS 3
#define IN_TILE_MAX (TILE + 2 * MAX_MASK_RADIUS)

__constant__ float F[(2 * MAX_MASK_RADIUS + 1) * (2 * MAX_MASK_RADIUS + 1)];

extern "C" __global__ void conv2d_tiled(const float *in, float *out, int r, int width, int height)
{
    __shared__ float tile[IN_TILE_MAX][IN_TILE_MAX];
    int in_dim = TILE + 2 * r;
    int row0 = blockIdx.y * TILE - r;
    int col0 = blockIdx.x * TILE - r;
    if (threadIdx.x == 0 && threadIdx.y == 0) {
        for (int ty = 0; ty < in_dim; ty++)
            for (int tx = 0; tx < in_dim; tx++) {
                int y = row0 + ty, x = col0 + tx;
                tile[ty][tx] = (y >= 0 && y < height && x >= 0 && x < width) ? in[y * width + x] : 0.0f;
            }
    }
    __syncthreads();
    int row = blockIdx.y * TILE + threadIdx.y;
    int col = blockIdx.x * TILE + threadIdx.x;
    if (row < height && col < width) {
        int w = 2 * r + 1;
        float sum = 0.0f;
        for (int i = 0; i < w; i++)
            for (int j = 0; j < w; j++)
                sum += F[i * w + j] * tile[threadIdx.y + i][threadIdx.x + j];
        out[row * width + col] = sum;
    }
}
