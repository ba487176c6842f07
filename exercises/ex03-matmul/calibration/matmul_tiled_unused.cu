// Wrong-technique variant for ex03 `tiled` (measured checks): stages both tiles
// in shared memory behind two barriers and reads one value back from each, but
// the products read M and N from global memory. Correct, spells the technique:
// must fail `tiled-global-loads` and the stand-in.
#define TILE 16

extern "C" __global__ void matmul_tiled(const float *M, const float *N, float *P, int width)
{
    __shared__ float Ms[TILE][TILE];
    __shared__ float Ns[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float sum = 0.0f;
    for (int t = 0; t < width / TILE; ++t) {
        Ms[ty][tx] = M[row * width + t * TILE + tx];
        Ns[ty][tx] = N[(t * TILE + ty) * width + col];
        __syncthreads();
        for (int i = 0; i < TILE; ++i)
            sum += M[row * width + t * TILE + i] * N[(t * TILE + i) * width + col];
        sum += 0.0f * (Ms[ty][tx] - Ns[ty][tx]);
        __syncthreads();
    }
    P[row * width + col] = sum;
}
