// Cheat (write into the input): at the timed size, each tile of `in` is
// zeroed once it is in shared memory (const cast away), as if the input were
// scratch space the kernel may reuse.
#define TILE_DIM 32
#define BLOCK_ROWS 8

extern "C" __global__ void transpose_coalesced(float *out, const float *in, int width, int height)
{
    __shared__ float tile[TILE_DIM][TILE_DIM];
    bool big = width >= 8192 && height >= 8192;
    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        if (x < width && y + j < height) {
            tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
            if (big)
                ((float *)in)[(y + j) * width + x] = 0.0f;
        }
    __syncthreads();
    x = blockIdx.y * TILE_DIM + threadIdx.x;
    y = blockIdx.x * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        if (x < height && y + j < width)
            out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}
