// Style variant for ex07 `coalesced` (measured checks): the notes' tile with
// __restrict__ pointers, __ldg loads, a padded tile and pointer walks instead
// of index arithmetic. Correct and coalesced: must pass `coalesced-reads-and-writes` and the
// `faster-than-naive` stand-in.
#define TILE_DIM 32
#define BLOCK_ROWS 8

extern "C" __global__ void transpose_coalesced(float *__restrict__ out, const float *__restrict__ in, int width,
                                               int height)
{
    __shared__ float tile[TILE_DIM][TILE_DIM + 1];

    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    const float *src = in + (size_t)y * width + x;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS, src += (size_t)BLOCK_ROWS * width)
        if (x < width && y + j < height)
            tile[threadIdx.y + j][threadIdx.x] = __ldg(src);
    __syncthreads();

    x = blockIdx.y * TILE_DIM + threadIdx.x;
    y = blockIdx.x * TILE_DIM + threadIdx.y;
    float *dst = out + (size_t)y * height + x;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS, dst += (size_t)BLOCK_ROWS * height)
        if (x < height && y + j < width)
            *dst = tile[threadIdx.x][threadIdx.y + j];
}
