// Variant: off by one in the bounds test (`>` for `>=`): the threads of row or
// column `width` compute and write one element past their row.
extern "C" __global__ void matmul_naive(const float *M, const float *N, float *P, int width)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row > width || col > width)
        return;
    float sum = 0.0f;
    for (int i = 0; i < width; ++i)
        sum += M[row * width + i] * N[i * width + col];
    P[row * width + col] = sum;
}
