// Planted flaw: named `coalesced`, but it is the naive transpose: the reads are
// coalesced, the writes stride by `height` floats (one sector per thread).
#define TILE_DIM 32
#define BLOCK_ROWS 8

extern "C" __global__ void transpose_coalesced(float *out, const float *in, int width, int height)
{
    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    if (x >= width)
        return;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        if (y + j < height)
            out[x * height + (y + j)] = in[(y + j) * width + x];
}
