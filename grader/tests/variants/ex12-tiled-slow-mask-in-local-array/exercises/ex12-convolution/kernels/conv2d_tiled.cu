// Variant (slow, a real mistake): the reference's tile and halo, but each
// thread first copies the mask from constant memory into its own array "to
// have it in registers". The radius is only known at run time, so the array is
// indexed at run time and lives in local memory: every tap reads its weight
// from a per-thread copy (a 128-byte load per warp) instead of one broadcast.
#define TILE 16
#define MAX_MASK_RADIUS 3
#define IN_TILE_MAX (TILE + 2 * MAX_MASK_RADIUS)
#define MAX_W (2 * MAX_MASK_RADIUS + 1)

__constant__ float F[MAX_W * MAX_W];

extern "C" __global__ void conv2d_tiled(const float *in, float *out, int r, int width, int height)
{
    __shared__ float tile[IN_TILE_MAX][IN_TILE_MAX];
    int in_dim = TILE + 2 * r;
    int row0 = blockIdx.y * TILE - r;
    int col0 = blockIdx.x * TILE - r;
    for (int k = threadIdx.y * TILE + threadIdx.x; k < in_dim * in_dim; k += TILE * TILE) {
        int ty = k / in_dim, tx = k % in_dim;
        int y = row0 + ty, x = col0 + tx;
        tile[ty][tx] = (y >= 0 && y < height && x >= 0 && x < width) ? in[y * width + x] : 0.0f;
    }
    __syncthreads();
    int row = blockIdx.y * TILE + threadIdx.y;
    int col = blockIdx.x * TILE + threadIdx.x;
    if (row < height && col < width) {
        int w = 2 * r + 1;
        float mask[MAX_W * MAX_W];
        for (int k = 0; k < w * w; k++)
            mask[k] = F[k];
        float sum = 0.0f;
        for (int i = 0; i < w; i++)
            for (int j = 0; j < w; j++)
                sum += mask[i * w + j] * tile[threadIdx.y + i][threadIdx.x + j];
        out[row * width + col] = sum;
    }
}
