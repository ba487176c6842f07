// ex03 `rect` that runs k / TILE phases: when k is not a multiple of TILE the
// last, partial phase (k % TILE products) is never added. Every element of P
// is wrong then, the interior ones too.
#define TILE 16

extern "C" __global__ void matmul_rect(const float *M, const float *N, float *P, int m, int k, int n)
{
    __shared__ float Ms[TILE][TILE];
    __shared__ float Ns[TILE][TILE];

    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;

    float sum = 0.0f;
    for (int t = 0; t < k / TILE; ++t) { // drops the last, partial phase when k % TILE != 0
        int m_col = t * TILE + tx; // column of M this thread loads
        int n_row = t * TILE + ty; // row of N this thread loads
        Ms[ty][tx] = (row < m && m_col < k) ? M[row * k + m_col] : 0.0f;
        Ns[ty][tx] = (n_row < k && col < n) ? N[n_row * n + col] : 0.0f;
        __syncthreads(); // the tiles are complete before anyone reads them

#pragma unroll
        for (int i = 0; i < TILE; ++i)
            sum += Ms[ty][i] * Ns[i][tx];
        __syncthreads(); // everyone is done with them before the next phase overwrites them
    }
    if (row < m && col < n)
        P[row * n + col] = sum;
}
