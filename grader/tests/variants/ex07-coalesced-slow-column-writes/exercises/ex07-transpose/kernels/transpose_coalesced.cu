// Calibration variant for ex07 `coalesced`: correct, and it has a 32 x 32 shared
// tile and a barrier (so it passes the structure check), but it still writes
// `out` in columns: each thread puts back the element it loaded and stores it
// at its transposed place, `height` floats from its neighbour's. It is the naive
// pattern with a detour through shared memory and must fail
// `perf::faster-than-naive`.
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
            out[x * height + (y + j)] = tile[threadIdx.y + j][threadIdx.x];
}
