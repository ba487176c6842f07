// Variant (correct, the slowest style we know of): padded Ms rows and the inner
// loop kept rolled (`#pragma unroll 1`).
#define TILE 16
extern "C" __global__ void matmul_rect(const float *M, const float *N, float *P, int m, int k, int n)
{
    __shared__ float Ms[TILE][TILE + 1];
    __shared__ float Ns[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    float sum = 0.0f;
    for (int t = 0; t < k; t += TILE) {
        Ms[ty][tx] = (row < m && t + tx < k) ? M[row * k + t + tx] : 0.0f;
        Ns[ty][tx] = (t + ty < k && col < n) ? N[(t + ty) * n + col] : 0.0f;
        __syncthreads();
#pragma unroll 1
        for (int i = 0; i < TILE; ++i)
            sum += Ms[ty][i] * Ns[i][tx];
        __syncthreads();
    }
    if (row < m && col < n)
        P[row * n + col] = sum;
}
