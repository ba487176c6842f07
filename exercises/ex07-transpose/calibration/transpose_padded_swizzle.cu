// Style variant for ex07 `padded` (measured checks): an unpadded [32][32] tile
// whose columns are XOR-swizzled (element (r, c) lives at tile[r][c ^ r]), so
// the column reads hit 32 different banks without any padding. Correct and
// conflict-free: must pass every structure check and every stand-in.
#define TILE_DIM 32
#define BLOCK_ROWS 8

extern "C" __global__ void transpose_padded(float *out, const float *in, int width, int height)
{
    __shared__ float tile[TILE_DIM][TILE_DIM];

    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
        int r = threadIdx.y + j;
        if (x < width && y + j < height)
            tile[r][threadIdx.x ^ r] = in[(y + j) * width + x];
    }
    __syncthreads();

    x = blockIdx.y * TILE_DIM + threadIdx.x;
    y = blockIdx.x * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
        int c = threadIdx.y + j;
        if (x < height && y + j < width)
            out[(y + j) * height + x] = tile[threadIdx.x][c ^ threadIdx.x];
    }
}
