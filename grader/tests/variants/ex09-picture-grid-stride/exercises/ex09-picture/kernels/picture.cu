// 2D grid-stride loops: also right for an image larger than the grid.
extern "C" __global__ void PictureKernel(const float *d_Pin, float *d_Pout, int n, int m)
{
    for (int Row = blockIdx.y * blockDim.y + threadIdx.y; Row < m; Row += gridDim.y * blockDim.y)
        for (int Col = blockIdx.x * blockDim.x + threadIdx.x; Col < n; Col += gridDim.x * blockDim.x)
            d_Pout[Row * n + Col] = d_Pin[Row * n + Col] * 2.0f;
}
