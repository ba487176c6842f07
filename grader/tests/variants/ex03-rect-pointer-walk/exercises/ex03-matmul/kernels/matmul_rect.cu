// Variant (correct): pointers walk along M's row and down N's column; the
// bounds are tested on the phase's offset.
#define TILE 16
extern "C" __global__ void matmul_rect(const float *M, const float *N, float *P, int m, int k, int n)
{
    __shared__ float Ms[TILE][TILE];
    __shared__ float Ns[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    const float *pm = M + (long)row * k + tx;
    const float *pn = N + (long)ty * n + col;
    float sum = 0.0f;
    for (int t = 0; t < k; t += TILE, pm += TILE, pn += (long)TILE * n) {
        Ms[ty][tx] = (row < m && t + tx < k) ? *pm : 0.0f;
        Ns[ty][tx] = (t + ty < k && col < n) ? *pn : 0.0f;
        __syncthreads();
#pragma unroll 4
        for (int i = 0; i < TILE; ++i)
            sum += Ms[ty][i] * Ns[i][tx];
        __syncthreads();
    }
    if (row < m && col < n)
        P[row * n + col] = sum;
}
