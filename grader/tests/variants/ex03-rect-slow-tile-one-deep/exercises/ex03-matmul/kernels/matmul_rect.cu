// Calibration variant for ex03 `rect`: correct, shared memory and two barriers
// per phase (so it passes the structure checks), but with tiles one element deep
// (TILE 1 along k): each phase stages one column of M and one row of N, so the
// block meets two barriers for every single multiply-add. It must fail
// `perf::faster-than-naive`.
#define TILE 16

extern "C" __global__ void matmul_rect(const float *M, const float *N, float *P, int m, int k, int n)
{
    __shared__ float Ms[TILE];
    __shared__ float Ns[TILE];

    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;

    float sum = 0.0f;
    for (int i = 0; i < k; ++i) {
        if (tx == 0)
            Ms[ty] = row < m ? M[row * k + i] : 0.0f;
        if (ty == 0)
            Ns[tx] = col < n ? N[i * n + col] : 0.0f;
        __syncthreads();
        sum += Ms[ty] * Ns[tx];
        __syncthreads();
    }
    if (row < m && col < n)
        P[row * n + col] = sum;
}
