// ex07 `naive`, a variant: the row test one off, `y + j <= height`: the row
// `height` past the matrix is read (past the end of `in` for the last column).
#define TILE_DIM 32
#define BLOCK_ROWS 8

extern "C" __global__ void transpose_naive(float *out, const float *in, int width, int height)
{
    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    if (x >= width)
        return;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        if (y + j <= height)
            out[x * height + (y + j)] = in[(y + j) * width + x];
}
