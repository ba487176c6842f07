// Wrong-technique variant for ex09 (measured checks): the block's 256 threads
// numbered 0..255 and that number split the other way round (row = t % 16,
// column = t / 16). The same uncoalesced mapping as reference/slow, spelled
// without threadIdx.y: correct, must fail `coalesced` all the same.
extern "C" __global__ void PictureKernel(const float *d_Pin, float *d_Pout, int n, int m)
{
    int t = threadIdx.y * blockDim.x + threadIdx.x;
    int Row = blockIdx.y * 16 + t % 16;
    int Col = blockIdx.x * 16 + t / 16;
    if (Row < m && Col < n)
        d_Pout[Row * n + Col] = 2.0f * d_Pin[Row * n + Col];
}
