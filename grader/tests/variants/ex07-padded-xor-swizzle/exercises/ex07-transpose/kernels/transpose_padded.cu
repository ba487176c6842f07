// Variant (correct, conflict-free without padding): a 32 x 32 tile with an XOR
// swizzle. Element (r, c) is stored at column c ^ r: a row's 32 elements and a
// column's 32 elements each fall in 32 different banks.
#define TILE_DIM 32
#define BLOCK_ROWS 8
extern "C" __global__ void transpose_padded(float *out, const float *in, int width, int height)
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
