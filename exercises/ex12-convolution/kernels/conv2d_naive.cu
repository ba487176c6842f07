// ex12, part `naive`: 2D convolution, one thread per output pixel, the image
// and the mask both read from global memory (README.md has the drawing).
//
//     out[row][col] = sum over i, j in -r..r of  mask[(i + r) * (2r + 1) + (j + r)] * in[row + i][col + j]
//
// The image is `width` columns by `height` rows, row-major: pixel (row, col)
// is at row * width + col. The mask is (2r + 1) x (2r + 1) floats, row-major,
// 0 <= r <= MAX_MASK_RADIUS. Pixels outside the image ("ghost cells") count as
// 0: never read them (they are outside the buffer, or in another row).
//
// Launch (fixed by the grader): blocks of TILE x TILE = 16 x 16 threads, a grid
// of ceil(width / 16) x ceil(height / 16) blocks; the grid's x covers the
// columns, y the rows. One thread per output; threads outside the image write
// nothing.
#define TILE 16
#define MAX_MASK_RADIUS 3

extern "C" __global__ void conv2d_naive(const float *in, const float *mask, float *out, int r, int width, int height)
{
    // TODO 1: this thread's output pixel: the column from the x indices
    //         (blockIdx.x * blockDim.x + threadIdx.x), the row from the y ones.
    //         Keep the column on threadIdx.x: neighbouring threads of a warp then
    //         read neighbouring pixels of a row (coalesced).
    //
    // TODO 2: threads outside the image (row >= height or col >= width) stop.
    //
    // TODO 3: add up mask[i][j] * in[row - r + i][col - r + j] for i, j in
    //         0 .. 2r, skipping the taps that fall outside the image, in a
    //         float, and write the sum to out[row * width + col].
}
