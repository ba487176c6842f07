// ex07, part `coalesced`: the transpose, reading AND writing global memory in rows.
//
// Same task, layout and launch as transpose_naive.cu:
//   out[c * height + r] = in[r * width + c]   (in: height x width, out: width x height)
//   block = (TILE_DIM, BLOCK_ROWS) = (32, 8), grid = (ceil(width / 32), ceil(height / 32)),
//   each block one 32 x 32 tile of `in`, each thread 4 rows BLOCK_ROWS apart;
//   any width and height from 1 up (partial tiles at the edges).
//
// The naive kernel writes a column of `out` per warp: 32 floats `height` apart,
// 32 separate memory transactions where a row would need one. Here the block
// first copies its tile of `in` into shared memory, row by row (coalesced reads),
// waits until the whole tile is there, and then writes the tile's transpose to
// `out`, again row by row (coalesced writes): the transposing happens in shared
// memory, where reading a column is cheap.
//
// The grader checks the PTX for a shared tile of TILE_DIM x TILE_DIM floats and a
// barrier, and times your kernel against the naive pattern: yours must be
// clearly faster.

#define TILE_DIM 32
#define BLOCK_ROWS 8

extern "C" __global__ void transpose_coalesced(float *out, const float *in, int width, int height)
{
    // TODO 1: declare the tile: __shared__ float tile[TILE_DIM][TILE_DIM];
    // TODO 2: as in the naive kernel, x = column, y = first row of this thread in
    //         `in`; for j = 0, BLOCK_ROWS, ... < TILE_DIM, copy in(row y + j, column x)
    //         into tile[threadIdx.y + j][threadIdx.x] when it is inside the matrix.
    // TODO 3: __syncthreads(): the next step reads elements other threads loaded.
    //         Every thread of the block must reach it, also those outside the
    //         matrix: test bounds around the loads, never `return` before it.
    // TODO 4: this block's tile goes to the mirrored tile position in `out`
    //         (block row and block column swapped). Recompute x (a column of `out`)
    //         and y (the first row of `out`) for this thread so that consecutive
    //         threadIdx.x write consecutive floats of a row of `out`.
    // TODO 5: for each j, write that element of `out` when it is inside `out`
    //         (a row of `out` has `height` elements, and `out` has `width` rows),
    //         taking its value from a COLUMN of the tile.
}
