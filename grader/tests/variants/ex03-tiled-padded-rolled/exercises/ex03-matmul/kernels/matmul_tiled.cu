// Variant (correct, the slowest style we know of): padded Ms rows and the inner
// loop kept rolled (`#pragma unroll 1`): the two style costs of the family together.
#define TILE 16
extern "C" __global__ void matmul_tiled(const float *M, const float *N, float *P, int width)
{
    __shared__ float Ms[TILE][TILE + 1];
    __shared__ float Ns[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    float sum = 0.0f;
    for (int t = 0; t < width / TILE; ++t) {
        Ms[ty][tx] = M[row * width + t * TILE + tx];
        Ns[ty][tx] = N[(t * TILE + ty) * width + col];
        __syncthreads();
#pragma unroll 1
        for (int i = 0; i < TILE; ++i)
            sum += Ms[ty][i] * Ns[i][tx];
        __syncthreads();
    }
    P[row * width + col] = sum;
}
