// ex07 `naive`, reference solution: coalesced reads, strided writes.
#define TILE_DIM 32
#define BLOCK_ROWS 8

extern "C" __global__ void transpose_naive(float *out, const float *in, int width, int height)
{
    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    if (x >= width)
        return;  // no barrier in this kernel, so leaving early is safe
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        if (y + j < height)
            out[x * height + (y + j)] = in[(y + j) * width + x];
}
