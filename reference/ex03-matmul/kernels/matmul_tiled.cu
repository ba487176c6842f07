// ex03 `tiled`, reference solution (the course notes' kernel): each phase the
// block stages one TILE x TILE tile of M and one of N in shared memory, then
// every thread takes TILE products from shared memory. width % TILE == 0.
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
        // One element of each tile per thread; consecutive tx read consecutive
        // addresses, so both loads are coalesced.
        Ms[ty][tx] = M[row * width + t * TILE + tx];
        Ns[ty][tx] = N[(t * TILE + ty) * width + col];
        __syncthreads(); // the tiles are complete before anyone reads them

#pragma unroll
        for (int i = 0; i < TILE; ++i)
            sum += Ms[ty][i] * Ns[i][tx];
        __syncthreads(); // everyone is done with them before the next phase overwrites them
    }
    P[row * width + col] = sum;
}
