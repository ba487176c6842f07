// Variant (correct): __restrict__, __ldg tile loads, fmaf, and the inner loop
// explicitly kept rolled (`#pragma unroll 1`).
#define TILE 16
extern "C" __global__ void matmul_tiled(const float *__restrict__ M, const float *__restrict__ N,
                                        float *__restrict__ P, int width)
{
    __shared__ float Ms[TILE][TILE];
    __shared__ float Ns[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    float sum = 0.0f;
    for (int t = 0; t < width; t += TILE) {
        Ms[ty][tx] = __ldg(&M[row * width + t + tx]);
        Ns[ty][tx] = __ldg(&N[(t + ty) * width + col]);
        __syncthreads();
#pragma unroll 1
        for (int i = 0; i < TILE; ++i)
            sum = fmaf(Ms[ty][i], Ns[i][tx], sum);
        __syncthreads();
    }
    P[row * width + col] = sum;
}
