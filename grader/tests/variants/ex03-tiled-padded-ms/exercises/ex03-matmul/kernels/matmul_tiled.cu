// Variant (correct): Ms rows padded to TILE + 1 floats (harmless here: Ms is
// read as a broadcast), inner loop not unrolled by pragma.
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
        for (int i = 0; i < TILE; ++i)
            sum += Ms[ty][i] * Ns[i][tx];
        __syncthreads();
    }
    P[row * width + col] = sum;
}
