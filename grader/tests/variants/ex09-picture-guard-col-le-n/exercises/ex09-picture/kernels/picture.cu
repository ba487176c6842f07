// ex09, a variant: the column test one off, `Col <= n`: the threads of column
// n read and write one pixel past each row (past the end on the last row).
extern "C" __global__ void PictureKernel(const float *d_Pin, float *d_Pout, int n, int m)
{
    int Row = blockIdx.y * blockDim.y + threadIdx.y;
    int Col = blockIdx.x * blockDim.x + threadIdx.x;
    if (Row < m && Col <= n)
        d_Pout[Row * n + Col] = 2.0f * d_Pin[Row * n + Col];
}
