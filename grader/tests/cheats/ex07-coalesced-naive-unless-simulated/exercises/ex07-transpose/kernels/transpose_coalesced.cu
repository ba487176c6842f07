// Cheat (tell the simulator from the GPU): the structure check `shared-tile`
// and the measured stand-in replay the kernel on ptx-sim, which used to
// report %nsmid = 1. There, the transpose through a shared tile; on a GPU
// (more than one SM) the naive transpose, whose writes walk down the columns
// of `out` (1.00x the naive kernel by the clock).
#define TILE_DIM 32
#define BLOCK_ROWS 8

extern "C" __global__ void transpose_coalesced(float *out, const float *in, int width, int height)
{
    __shared__ float tile[TILE_DIM][TILE_DIM];
    unsigned int sms;
    asm volatile("mov.u32 %0, %%nsmid;" : "=r"(sms));

    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    if (sms != 1) {
        for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
            if (x < width && y + j < height)
                out[x * height + (y + j)] = in[(y + j) * width + x];
        return;
    }

    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        if (x < width && y + j < height)
            tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];

    __syncthreads();

    x = blockIdx.y * TILE_DIM + threadIdx.x;
    y = blockIdx.x * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        if (x < height && y + j < width)
            out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}
