// ex09, part `picture`: the notes' PictureKernel. Scale every pixel of an
// n x m image by 2:
//
//     d_Pout[Row * n + Col] = 2 * d_Pin[Row * n + Col]    for Row < m, Col < n
//
// The image is stored row after row: n is its width (columns), m its height
// (rows), so a row is n pixels long. The grader's images are not square and
// their sides are not multiples of 16 (the notes' example is 76 x 62).
//
// Launch (fixed by the grader, as in the notes): blocks of 16 x 16 threads,
//     dim3 dimGrid(ceil(n / 16.0), ceil(m / 16.0), 1);   dim3 dimBlock(16, 16, 1);
// so the x dimension of the grid covers the columns and y covers the rows.
// One thread per pixel; the last blocks have threads outside the image.
//
// Memory: the 32 threads of a warp are 32 consecutive threadIdx.x values
// first (here: two rows of the block). Pick the mapping so that neighbouring
// threads read neighbouring pixels of one row.
extern "C" __global__ void PictureKernel(const float *d_Pin, float *d_Pout, int n, int m)
{
    // TODO 1: this thread's pixel: Row from the y indices (blockIdx.y,
    //         blockDim.y, threadIdx.y) and Col from the x ones.
    // TODO 2: if the pixel is inside the image (Row < m and Col < n), write
    //         2 * the input pixel to the same place of d_Pout.
}
