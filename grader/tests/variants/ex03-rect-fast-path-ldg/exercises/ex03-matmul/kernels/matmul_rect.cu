// Variant (correct): __restrict__ and __ldg; full phases load without bounds
// tests, only the last partial phase and edge blocks test them.
#define TILE 16
extern "C" __global__ void matmul_rect(const float *__restrict__ M, const float *__restrict__ N,
                                       float *__restrict__ P, int m, int k, int n)
{
    __shared__ float Ms[TILE][TILE];
    __shared__ float Ns[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    bool inside = (blockIdx.y + 1) * TILE <= m && (blockIdx.x + 1) * TILE <= n;
    float sum = 0.0f;
    for (int t = 0; t < k; t += TILE) {
        if (inside && t + TILE <= k) {
            Ms[ty][tx] = __ldg(&M[row * k + t + tx]);
            Ns[ty][tx] = __ldg(&N[(t + ty) * n + col]);
        } else {
            Ms[ty][tx] = (row < m && t + tx < k) ? __ldg(&M[row * k + t + tx]) : 0.0f;
            Ns[ty][tx] = (t + ty < k && col < n) ? __ldg(&N[(t + ty) * n + col]) : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int i = 0; i < TILE; ++i)
            sum = fmaf(Ms[ty][i], Ns[i][tx], sum);
        __syncthreads();
    }
    if (row < m && col < n)
        P[row * n + col] = sum;
}
