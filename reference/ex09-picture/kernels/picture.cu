// ex09 `picture`, reference solution: the notes' PictureKernel. The column
// comes from the x indices, so the 16 threads of a block row (half a warp)
// read 16 consecutive floats of one image row: 4 sectors per warp request.
extern "C" __global__ void PictureKernel(const float *d_Pin, float *d_Pout, int n, int m)
{
    int Row = blockIdx.y * blockDim.y + threadIdx.y;
    int Col = blockIdx.x * blockDim.x + threadIdx.x;
    if (Row < m && Col < n)
        d_Pout[Row * n + Col] = 2.0f * d_Pin[Row * n + Col];
}
