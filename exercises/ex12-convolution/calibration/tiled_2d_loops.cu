// Style variant of part `tiled` (must pass): the tile filled by 2D strided
// loops (rows 16 apart, columns 16 apart: the block's own 16 x 16 pixels
// first, then the right and bottom strips), a padded tile row, the mask
// loops unrolled for the largest radius.
#define TILE 16
#define MAX_MASK_RADIUS 3
#define IN_TILE_MAX (TILE + 2 * MAX_MASK_RADIUS)

__constant__ float F[(2 * MAX_MASK_RADIUS + 1) * (2 * MAX_MASK_RADIUS + 1)];

extern "C" __global__ void conv2d_tiled(const float *__restrict__ in, float *__restrict__ out, int r, int width,
                                        int height)
{
    __shared__ float tile[IN_TILE_MAX][IN_TILE_MAX + 1];
    const int in_dim = TILE + 2 * r;
    const int row0 = blockIdx.y * TILE - r, col0 = blockIdx.x * TILE - r;
    for (int ty = threadIdx.y; ty < in_dim; ty += TILE)
        for (int tx = threadIdx.x; tx < in_dim; tx += TILE) {
            const int y = row0 + ty, x = col0 + tx;
            float v = 0.0f;
            if (y >= 0 && y < height && x >= 0 && x < width)
                v = __ldg(&in[y * width + x]);
            tile[ty][tx] = v;
        }
    __syncthreads();
    const int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    if (row >= height || col >= width)
        return;
    const int w = 2 * r + 1;
    float sum = 0.0f;
#pragma unroll
    for (int i = 0; i < 2 * MAX_MASK_RADIUS + 1; i++) {
        if (i < w) {
#pragma unroll
            for (int j = 0; j < 2 * MAX_MASK_RADIUS + 1; j++)
                if (j < w)
                    sum = fmaf(F[i * w + j], tile[threadIdx.y + i][threadIdx.x + j], sum);
        }
    }
    out[row * width + col] = sum;
}
