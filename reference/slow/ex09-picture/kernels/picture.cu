// Calibration variant for ex09 `picture`: correct, but the column comes from
// threadIdx.y and the row from threadIdx.x (inside the same 16 x 16 tile of
// the image, so every pixel is still written once). A warp then reads 2
// floats in each of 16 rows: 16 sectors per request instead of 4. Must fail
// `structure::coalesced` (measured) and `perf::share-of-linear`.
extern "C" __global__ void PictureKernel(const float *d_Pin, float *d_Pout, int n, int m)
{
    int Row = blockIdx.y * blockDim.y + threadIdx.x;
    int Col = blockIdx.x * blockDim.x + threadIdx.y;
    if (Row < m && Col < n)
        d_Pout[Row * n + Col] = 2.0f * d_Pin[Row * n + Col];
}
