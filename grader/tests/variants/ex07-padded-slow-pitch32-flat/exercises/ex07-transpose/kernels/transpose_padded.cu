// Calibration variant for ex07 `padded`: correct, and it declares the padded
// tile[32][33] (4224 bytes) and a barrier, so it passes both structure checks;
// but it indexes the tile through a flat pointer with a row pitch of 32 floats,
// so the padding column is never used and the column reads are still 32-way
// bank conflicts. It runs like the unpadded tile and must fail
// `perf::share-of-copy` and `perf::faster-than-unpadded-tile`.
#define TILE_DIM 32
#define BLOCK_ROWS 8

extern "C" __global__ void transpose_padded(float *out, const float *in, int width, int height)
{
    __shared__ float tile[TILE_DIM][TILE_DIM + 1];
    float *flat = &tile[0][0];  // pitch TILE_DIM, not TILE_DIM + 1

    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        if (x < width && y + j < height)
            flat[(threadIdx.y + j) * TILE_DIM + threadIdx.x] = in[(y + j) * width + x];

    __syncthreads();

    x = blockIdx.y * TILE_DIM + threadIdx.x;
    y = blockIdx.x * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        if (x < height && y + j < width)
            out[(y + j) * height + x] = flat[threadIdx.x * TILE_DIM + threadIdx.y + j];
}
