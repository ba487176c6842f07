// ex12, part `tiled`: 2D convolution with the block's input tile and its halo
// in shared memory, the mask in constant memory (PMPP, chapter 7; README.md
// has the drawing).
//
//     out[row][col] = sum over i, j in -r..r of  F[(i + r) * (2r + 1) + (j + r)] * in[row + i][col + j]
//
// with in[y][x] = 0 outside the image. The grader writes the mask into F
// before every launch, as for part `constant`.
//
// Launch (fixed by the grader): blocks of TILE x TILE = 16 x 16 threads, a
// grid of ceil(width / 16) x ceil(height / 16) blocks, one output per thread;
// no dynamic shared memory. The block's 16 x 16 outputs read a
// (16 + 2r) x (16 + 2r) input tile: its own pixels and a halo of r pixels on
// every side.
#define TILE 16
#define MAX_MASK_RADIUS 3
#define IN_TILE_MAX (TILE + 2 * MAX_MASK_RADIUS)

__constant__ float F[(2 * MAX_MASK_RADIUS + 1) * (2 * MAX_MASK_RADIUS + 1)];

extern "C" __global__ void conv2d_tiled(const float *in, float *out, int r, int width, int height)
{
    // TODO 1: declare the input tile in shared memory, sized for the largest
    //         radius: __shared__ float tile[IN_TILE_MAX][IN_TILE_MAX].
    //
    // TODO 2: fill its (16 + 2r) x (16 + 2r) corner: tile[ty][tx] is pixel
    //         (blockIdx.y * 16 - r + ty, blockIdx.x * 16 - r + tx), or 0 for a
    //         ghost cell. There are more tile pixels than threads: loop, each
    //         thread taking pixels 256 apart, with consecutive threads on
    //         consecutive pixels of a tile row (coalesced loads).
    //
    // TODO 3: wait until the whole tile is there (other threads loaded most of
    //         what this thread reads).
    //
    // TODO 4: threads inside the image add up F[i * (2r + 1) + j] *
    //         tile[threadIdx.y + i][threadIdx.x + j] and write out[row * width + col].
    //         No global load in this loop: every tap comes from the tile.
}
