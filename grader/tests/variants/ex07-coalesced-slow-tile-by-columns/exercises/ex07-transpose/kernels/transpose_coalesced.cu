// Variant (slow, a real mistake): the tile is filled column by column: each
// warp reads a column of `in` (32 rows, one float each) into a column of the
// tile, then the block writes `out` in rows. The writes are coalesced now, but
// the reads are the naive kernel's writes turned around: 32 sectors per load.
#define TILE_DIM 32
#define BLOCK_ROWS 8

extern "C" __global__ void transpose_coalesced(float *out, const float *in, int width, int height)
{
    __shared__ float tile[TILE_DIM][TILE_DIM];

    // threadIdx.x walks down the tile's rows, threadIdx.y across its columns.
    int x = blockIdx.x * TILE_DIM + threadIdx.y;
    int y = blockIdx.y * TILE_DIM + threadIdx.x;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        if (x + j < width && y < height)
            tile[threadIdx.x][threadIdx.y + j] = in[y * width + x + j];

    __syncthreads();

    x = blockIdx.y * TILE_DIM + threadIdx.x;
    y = blockIdx.x * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        if (x < height && y + j < width)
            out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}
