// The patterns `tiled` and `rect` must beat: the naive product from the course
// notes (one thread per element of P, every operand read from global memory).
// Timed by the grader in the same run as the student's kernel, with the same
// 16 x 16 blocks.

extern "C" __global__ void yardstick_naive(const float *M, const float *N, float *P, int width)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < width && col < width) {
        float sum = 0.0f;
        for (int i = 0; i < width; ++i)
            sum += M[row * width + i] * N[i * width + col];
        P[row * width + col] = sum;
    }
}

extern "C" __global__ void yardstick_naive_rect(const float *M, const float *N, float *P, int m, int k, int n)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < m && col < n) {
        float sum = 0.0f;
        for (int i = 0; i < k; ++i)
            sum += M[row * k + i] * N[i * n + col];
        P[row * n + col] = sum;
    }
}
