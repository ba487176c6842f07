// Variant: an extra barrier inside an `if` before the loop (every thread of
// the block takes it, as width is the same for all), then the notes' loop
// with both barriers. Correct: the extra barrier is only wasted time.
#define TILE 16
extern "C" __global__ void matmul_tiled(const float *M, const float *N, float *P, int width)
{
    __shared__ float Ms[TILE][TILE];
    __shared__ float Ns[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    float sum = 0.0f;
    if (width >= TILE)
        __syncthreads();
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
