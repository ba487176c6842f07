// Variant (slow, a real mistake): N's tile stored transposed so that the inner
// loop walks both tiles "along a row", as a CPU cache would like. On the GPU
// the read Nt[tx][i] goes down a column of the 16 x 16 tile: the 16 threads of
// a half-warp hit addresses 16 floats apart, an 8-way bank conflict on every
// read of N's tile. Tiles, bounds and barriers are otherwise the reference's.
#define TILE 16

extern "C" __global__ void matmul_rect(const float *M, const float *N, float *P, int m, int k, int n)
{
    __shared__ float Ms[TILE][TILE];
    __shared__ float Nt[TILE][TILE]; // Nt[c][r] holds N's tile element (r, c)

    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;

    float sum = 0.0f;
    for (int t = 0; t < (k + TILE - 1) / TILE; ++t) {
        int m_col = t * TILE + tx;
        int n_row = t * TILE + ty;
        Ms[ty][tx] = (row < m && m_col < k) ? M[row * k + m_col] : 0.0f;
        Nt[tx][ty] = (n_row < k && col < n) ? N[n_row * n + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int i = 0; i < TILE; ++i)
            sum += Ms[ty][i] * Nt[tx][i];
        __syncthreads();
    }
    if (row < m && col < n)
        P[row * n + col] = sum;
}
