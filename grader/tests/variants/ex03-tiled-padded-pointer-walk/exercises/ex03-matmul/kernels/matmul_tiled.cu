// Variant (correct, the issue's example): padded Ms rows and pointers that walk
// along M's row and down N's column, one tile per phase.
#define TILE 16
extern "C" __global__ void matmul_tiled(const float *M, const float *N, float *P, int width)
{
    __shared__ float Ms[TILE][TILE + 1];
    __shared__ float Ns[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    const float *m = M + row * width + tx;   // walks right by TILE
    const float *n = N + ty * width + col;   // walks down by TILE rows
    const float *m_end = M + row * width + width;
    float sum = 0.0f;
    for (; m < m_end; m += TILE, n += TILE * width) {
        Ms[ty][tx] = *m;
        Ns[ty][tx] = *n;
        __syncthreads();
#pragma unroll
        for (int i = 0; i < TILE; ++i)
            sum += Ms[ty][i] * Ns[i][tx];
        __syncthreads();
    }
    P[row * width + col] = sum;
}
