// The notes' mapping with __restrict__ and __ldg, the index computed once.
extern "C" __global__ void PictureKernel(const float *__restrict__ d_Pin, float *__restrict__ d_Pout, int n, int m)
{
    int Row = blockIdx.y * blockDim.y + threadIdx.y;
    int Col = blockIdx.x * blockDim.x + threadIdx.x;
    if (Row < m && Col < n) {
        int i = Row * n + Col;
        d_Pout[i] = 2.0f * __ldg(d_Pin + i);
    }
}
