// Variant: wrong non-square stride. N is k x n, but its rows are indexed with
// stride k (M's row length): right when k == n, wrong otherwise.
#define TILE 16
extern "C" __global__ void matmul_rect(const float *M, const float *N, float *P, int m, int k, int n)
{
    __shared__ float Ms[TILE][TILE];
    __shared__ float Ns[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    float sum = 0.0f;
    for (int t = 0; t < (k + TILE - 1) / TILE; ++t) {
        int m_col = t * TILE + tx;
        int n_row = t * TILE + ty;
        Ms[ty][tx] = (row < m && m_col < k) ? M[row * k + m_col] : 0.0f;
        Ns[ty][tx] = (n_row < k && col < n) ? N[n_row * k + col] : 0.0f;
        __syncthreads();
        for (int i = 0; i < TILE; ++i)
            sum += Ms[ty][i] * Ns[i][tx];
        __syncthreads();
    }
    if (row < m && col < n)
        P[row * n + col] = sum;
}
