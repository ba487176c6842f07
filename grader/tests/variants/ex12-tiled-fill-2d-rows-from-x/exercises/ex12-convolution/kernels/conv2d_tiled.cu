// ex12, part `tiled`, a variant: the tile filled by 2-D loops that take the
// tile's row from threadIdx.x and its column from threadIdx.y (the matrix
// habit "i is x"): right, but a warp's 16 lanes read 16 different rows.
#define TILE 16
#define MAX_MASK_RADIUS 3
#define IN_TILE_MAX (TILE + 2 * MAX_MASK_RADIUS)

__constant__ float F[(2 * MAX_MASK_RADIUS + 1) * (2 * MAX_MASK_RADIUS + 1)];

extern "C" __global__ void conv2d_tiled(const float *in, float *out, int r, int width, int height)
{
    __shared__ float tile[IN_TILE_MAX][IN_TILE_MAX];
    int side = TILE + 2 * r;
    int row0 = blockIdx.y * TILE - r;
    int col0 = blockIdx.x * TILE - r;
    for (int i = threadIdx.x; i < side; i += TILE)
        for (int j = threadIdx.y; j < side; j += TILE) {
            int y = row0 + i, x = col0 + j;
            float v = 0.0f;
            if (y >= 0 && y < height && x >= 0 && x < width)
                v = in[y * width + x];
            tile[i][j] = v;
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
