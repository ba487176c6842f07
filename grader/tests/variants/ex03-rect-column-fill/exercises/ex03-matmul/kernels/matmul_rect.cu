// Variant: M's tile filled down its columns, for any shape: thread (tx, ty)
// loads M[(by * TILE + tx) * k + t * TILE + ty] into Ms[tx][ty], so
// consecutive tx read rows of M k floats apart (10 to 22 sectors per warp
// request against 4 to 6 along rows). Right product, uncoalesced loads.
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
        int m_row = blockIdx.y * TILE + tx, m_col = t * TILE + ty;
        Ms[tx][ty] = (m_row < m && m_col < k) ? M[m_row * k + m_col] : 0.0f;
        int n_row = t * TILE + ty;
        Ns[ty][tx] = (n_row < k && col < n) ? N[n_row * n + col] : 0.0f;
        __syncthreads();
        for (int i = 0; i < TILE; ++i)
            sum += Ms[ty][i] * Ns[i][tx];
        __syncthreads();
    }
    if (row < m && col < n)
        P[row * n + col] = sum;
}
