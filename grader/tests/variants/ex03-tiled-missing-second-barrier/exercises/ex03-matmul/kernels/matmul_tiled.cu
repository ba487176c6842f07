// Variant: one barrier per phase. The next phase's loads may overwrite Ms and Ns
// while a slower warp still reads them; on a GPU it passes by luck.
#define TILE 16
extern "C" __global__ void matmul_tiled(const float *M, const float *N, float *P, int width)
{
    __shared__ float Ms[TILE][TILE];
    __shared__ float Ns[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    float sum = 0.0f;
    for (int t = 0; t < width / TILE; ++t) {
        Ms[ty][tx] = M[row * width + t * TILE + tx];
        Ns[ty][tx] = N[(t * TILE + ty) * width + col];
        __syncthreads();
        for (int i = 0; i < TILE; ++i)
            sum += Ms[ty][i] * Ns[i][tx];
    }
    P[row * width + col] = sum;
}
