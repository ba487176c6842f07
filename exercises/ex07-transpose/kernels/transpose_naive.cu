// ex07, part `naive`: out = transpose(in), straight from global memory.
//
// `in` is a `height` x `width` matrix of floats, stored row after row:
// element (row r, column c) is in[r * width + c]. `out` is its transpose, a
// `width` x `height` matrix: out[c * height + r] = in[r * width + c].
//
// The launch (set by the host; keep these values):
//   block = (TILE_DIM, BLOCK_ROWS) = (32, 8) threads,
//   grid  = (ceil(width / TILE_DIM), ceil(height / TILE_DIM)) blocks.
// Each block handles one TILE_DIM x TILE_DIM tile of `in`: the tile whose top-left
// element is (row blockIdx.y * TILE_DIM, column blockIdx.x * TILE_DIM). A block
// has only 8 rows of threads for the tile's 32 rows, so each thread handles 4
// elements, BLOCK_ROWS rows apart.
//
// width and height are any values from 1 up (width * height < 2^31): tiles at the
// right and bottom edges are partial, and threads that fall outside the matrix
// must neither read nor write.
//
// Keep the `extern "C"`, the name and the parameters exactly as they are: the
// grader looks the kernel up by name.

#define TILE_DIM 32
#define BLOCK_ROWS 8

extern "C" __global__ void transpose_naive(float *out, const float *in, int width, int height)
{
    // TODO 1: compute this thread's column x and first row y in `in` from
    //         blockIdx, threadIdx and TILE_DIM.
    // TODO 2: loop j = 0, BLOCK_ROWS, 2 * BLOCK_ROWS, ... while j < TILE_DIM; the
    //         thread's element j is (row y + j, column x).
    // TODO 3: if that element is inside the matrix (column < width, row < height),
    //         copy it to its transposed place in `out` (row x, column y + j; a row
    //         of `out` has `height` elements).
    //         A warp reads 32 neighbours in a row of `in` (coalesced) but writes
    //         them `height` floats apart in `out`: that is what the next parts fix.
}
