// ex07 `coalesced`, a real mistake: after filling the tile, the threads whose
// output column lies outside the matrix return, before the barrier. Their
// loads are done, so the numbers are right on a GPU (it releases the barrier
// once the threads that did not exit arrive); the README says not to return
// early before the barrier, and the PTX ISA leaves it undefined.
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

    x = blockIdx.y * TILE_DIM + threadIdx.x;
    y = blockIdx.x * TILE_DIM + threadIdx.y;
    if (x >= height)
        return;
    __syncthreads();

    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        if (y + j < width)
            out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}
