// Wrong-technique variant for ex07 `coalesced` (measured checks): declares and
// fills a 32 x 32 shared tile behind a barrier, but writes `out` straight from
// `in`, in columns, as the naive kernel does. Correct, spells the technique,
// has none of its effect: must fail `coalesced-reads-and-writes` and the stand-in.
#define TILE_DIM 32
#define BLOCK_ROWS 8

extern "C" __global__ void transpose_coalesced(float *out, const float *in, int width, int height)
{
    __shared__ float tile[TILE_DIM][TILE_DIM];

    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        if (x < width && y + j < height)
            tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
    __syncthreads();

    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        if (x < width && y + j < height)
            out[x * height + (y + j)] = in[(y + j) * width + x] + 0.0f * tile[threadIdx.y + j][threadIdx.x];
}
