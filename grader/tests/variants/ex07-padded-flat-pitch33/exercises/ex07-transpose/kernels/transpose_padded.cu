// Variant (correct): a flat tile with a row pitch of 33 floats, indexed by hand.
#define TILE_DIM 32
#define BLOCK_ROWS 8
#define PITCH (TILE_DIM + 1)
extern "C" __global__ void transpose_padded(float *out, const float *in, int width, int height)
{
    __shared__ float tile[TILE_DIM * PITCH];
    int tx = threadIdx.x, ty = threadIdx.y;
    int x = blockIdx.x * TILE_DIM + tx;
    int y = blockIdx.y * TILE_DIM + ty;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        if (x < width && y + j < height)
            tile[(ty + j) * PITCH + tx] = in[(y + j) * width + x];
    __syncthreads();
    x = blockIdx.y * TILE_DIM + tx;
    y = blockIdx.x * TILE_DIM + ty;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        if (x < height && y + j < width)
            out[(y + j) * height + x] = tile[tx * PITCH + ty + j];
}
