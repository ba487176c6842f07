// Variant (correct): a 32 x 32 tile with an XOR swizzle (element (r, c) is
// stored at column c ^ r), so neither the row writes nor the column reads
// conflict.
#define TILE_DIM 32
#define BLOCK_ROWS 8
extern "C" __global__ void transpose_coalesced(float *out, const float *in, int width, int height)
{
    __shared__ float tile[TILE_DIM][TILE_DIM];
    int tx = threadIdx.x, ty = threadIdx.y;
    int x = blockIdx.x * TILE_DIM + tx;
    int y = blockIdx.y * TILE_DIM + ty;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        if (x < width && y + j < height)
            tile[ty + j][tx ^ (ty + j)] = in[(y + j) * width + x];
    __syncthreads();
    x = blockIdx.y * TILE_DIM + tx;
    y = blockIdx.x * TILE_DIM + ty;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        if (x < height && y + j < width)
            out[(y + j) * height + x] = tile[tx][(ty + j) ^ tx];
}
