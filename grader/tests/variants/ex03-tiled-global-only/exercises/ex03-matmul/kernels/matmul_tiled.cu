// Variant: global where shared was asked. The naive product under the tiled
// kernel's name: correct, no tiles.
extern "C" __global__ void matmul_tiled(const float *M, const float *N, float *P, int width)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0.0f;
    for (int i = 0; i < width; ++i)
        sum += M[row * width + i] * N[i * width + col];
    P[row * width + col] = sum;
}
