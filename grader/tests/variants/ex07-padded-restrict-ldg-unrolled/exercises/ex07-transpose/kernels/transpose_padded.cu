// Variant (correct): the padded tile with __restrict__, __ldg and unrolled
// row loops; pointers computed once per thread.
#define TILE_DIM 32
#define BLOCK_ROWS 8
extern "C" __global__ void transpose_padded(float *__restrict__ out, const float *__restrict__ in, int width,
                                            int height)
{
    __shared__ float tile[TILE_DIM][TILE_DIM + 1];
    int tx = threadIdx.x, ty = threadIdx.y;
    int x = blockIdx.x * TILE_DIM + tx;
    int y = blockIdx.y * TILE_DIM + ty;
    const float *src = in + (long)y * width + x;
#pragma unroll
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        if (x < width && y + j < height)
            tile[ty + j][tx] = __ldg(src + (long)j * width);
    __syncthreads();
    x = blockIdx.y * TILE_DIM + tx;
    y = blockIdx.x * TILE_DIM + ty;
    float *dst = out + (long)y * height + x;
#pragma unroll
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        if (x < height && y + j < width)
            dst[(long)j * height] = tile[tx][ty + j];
}
