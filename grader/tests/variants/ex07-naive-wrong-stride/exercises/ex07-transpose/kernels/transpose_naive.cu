// Variant: wrong non-square stride. out is width x height (rows of `height`
// floats), but its rows are indexed with stride `width`. Right for square
// matrices only; when width > height it writes past the end of out.
#define TILE_DIM 32
#define BLOCK_ROWS 8
extern "C" __global__ void transpose_naive(float *out, const float *in, int width, int height)
{
    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    if (x >= width)
        return;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        if (y + j < height)
            out[x * width + (y + j)] = in[(y + j) * width + x];
}
