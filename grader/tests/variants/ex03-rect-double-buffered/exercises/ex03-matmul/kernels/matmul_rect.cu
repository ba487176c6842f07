// Variant: double-buffered tiles for any shape. The next phase's tiles go
// into the other buffer (loaded into registers first, stored after the
// products), so one barrier per phase is enough.
#define TILE 16
extern "C" __global__ void matmul_rect(const float *M, const float *N, float *P, int m, int k, int n)
{
    __shared__ float Ms[2][TILE][TILE];
    __shared__ float Ns[2][TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    int phases = (k + TILE - 1) / TILE;
    Ms[0][ty][tx] = (row < m && tx < k) ? M[row * k + tx] : 0.0f;
    Ns[0][ty][tx] = (ty < k && col < n) ? N[ty * n + col] : 0.0f;
    __syncthreads();
    float sum = 0.0f;
    for (int t = 0; t < phases; ++t) {
        int cur = t % 2;
        float a = 0.0f, b = 0.0f;
        int m_col = (t + 1) * TILE + tx, n_row = (t + 1) * TILE + ty;
        if (row < m && m_col < k)
            a = M[row * k + m_col];
        if (n_row < k && col < n)
            b = N[n_row * n + col];
#pragma unroll
        for (int i = 0; i < TILE; ++i)
            sum += Ms[cur][ty][i] * Ns[cur][i][tx];
        Ms[1 - cur][ty][tx] = a;
        Ns[1 - cur][ty][tx] = b;
        __syncthreads();
    }
    if (row < m && col < n)
        P[row * n + col] = sum;
}
