// Calibration variant for ex03 `tiled`: correct, both tiles in shared memory
// behind two barriers (so it passes the structure checks), but N's tile is
// stored transposed so that the inner loop reads it "along a row", as one would
// for a CPU cache. On the GPU that read goes down a column of the 16 x 16 tile:
// the 16 threads of a half-warp hit addresses 16 floats apart, so every read of
// Ns is an 8-way bank conflict. It must fail `perf::faster-than-naive`.
#define TILE 16

extern "C" __global__ void matmul_tiled(const float *M, const float *N, float *P, int width)
{
    __shared__ float Ms[TILE][TILE];
    __shared__ float Nt[TILE][TILE]; // Nt[c][r] holds N's tile element (r, c)

    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;

    float sum = 0.0f;
    for (int t = 0; t < width / TILE; ++t) {
        Ms[ty][tx] = M[row * width + t * TILE + tx];
        Nt[tx][ty] = N[(t * TILE + ty) * width + col];
        __syncthreads();
#pragma unroll
        for (int i = 0; i < TILE; ++i)
            sum += Ms[ty][i] * Nt[tx][i];
        __syncthreads();
    }
    P[row * width + col] = sum;
}
