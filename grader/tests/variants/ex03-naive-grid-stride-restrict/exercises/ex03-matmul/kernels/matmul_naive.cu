// Variant (correct): 2-D grid-stride loops, __restrict__ and a pointer walk
// along the row of M.
extern "C" __global__ void matmul_naive(const float *__restrict__ M, const float *__restrict__ N,
                                        float *__restrict__ P, int width)
{
    for (int row = blockIdx.y * blockDim.y + threadIdx.y; row < width; row += gridDim.y * blockDim.y)
        for (int col = blockIdx.x * blockDim.x + threadIdx.x; col < width; col += gridDim.x * blockDim.x) {
            const float *m = M + row * width;
            const float *n = N + col;
            float sum = 0.0f;
            for (int i = 0; i < width; ++i, n += width)
                sum += m[i] * *n;
            P[row * width + col] = sum;
        }
}
