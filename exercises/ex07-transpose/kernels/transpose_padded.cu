// ex07, part `padded`: the coalesced transpose without shared-memory bank conflicts.
//
// Same task, layout and launch as transpose_coalesced.cu:
//   out[c * height + r] = in[r * width + c]   (in: height x width, out: width x height)
//   block = (TILE_DIM, BLOCK_ROWS) = (32, 8), grid = (ceil(width / 32), ceil(height / 32)),
//   each block one 32 x 32 tile of `in`, each thread 4 rows BLOCK_ROWS apart;
//   any width and height from 1 up (partial tiles at the edges).
//
// Shared memory is split into 32 banks of 4-byte words; word k lives in bank
// k % 32, and a warp's accesses to different words of one bank are served one
// after the other. In a tile[32][32] of floats, a column is 32 words that are 32
// apart: all in the same bank, so reading tile[threadIdx.x][...] costs 32 turns
// (a 32-way bank conflict). Give every row one extra float, tile[32][33], and the
// words of a column are 33 apart: 32 different banks, one turn.
//
// The grader checks the PTX for a shared tile of TILE_DIM x (TILE_DIM + 1) floats
// (4224 bytes) and a barrier, and times your kernel against a plain copy (it must
// come close) and against the unpadded tile (it must be clearly faster).

#define TILE_DIM 32
#define BLOCK_ROWS 8

extern "C" __global__ void transpose_padded(float *out, const float *in, int width, int height)
{
    // TODO 1: declare the shared tile with one extra float at the end of each row
    //         (TILE_DIM rows of TILE_DIM + 1 floats).
    // TODO 2: the rest is your transpose_coalesced: load the tile row by row,
    //         __syncthreads(), write the transposed tile row by row. Keep indexing
    //         it as tile[row][column]: the padding column is never read or written,
    //         it only shifts each row to other banks.
}
