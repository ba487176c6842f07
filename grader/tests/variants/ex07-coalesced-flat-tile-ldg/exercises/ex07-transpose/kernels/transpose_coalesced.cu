// Variant (correct): a flat 1-D tile indexed by hand, __restrict__ and __ldg,
// the row loops unrolled.
#define TILE_DIM 32
#define BLOCK_ROWS 8
extern "C" __global__ void transpose_coalesced(float *__restrict__ out, const float *__restrict__ in, int width,
                                               int height)
{
    __shared__ float tile[TILE_DIM * TILE_DIM];
    int tx = threadIdx.x, ty = threadIdx.y;
    int x = blockIdx.x * TILE_DIM + tx;
    int y = blockIdx.y * TILE_DIM + ty;
#pragma unroll
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        if (x < width && y + j < height)
            tile[(ty + j) * TILE_DIM + tx] = __ldg(&in[(y + j) * width + x]);
    __syncthreads();
    x = blockIdx.y * TILE_DIM + tx;
    y = blockIdx.x * TILE_DIM + ty;
#pragma unroll
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        if (x < height && y + j < width)
            out[(y + j) * height + x] = tile[tx * TILE_DIM + ty + j];
}
