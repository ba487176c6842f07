// Variant (slow, a real mistake): the tiles are only 4 deep along the shared
// dimension (Ms is 16 x 4, Ns 4 x 16) "to save shared memory", loaded by the
// first 128 threads. As few global loads per multiply-add as 16 x 16 tiles,
// but each phase holds 4 multiply-adds between its two barriers instead of 16.
#define TILE 16
#define DEPTH 4

extern "C" __global__ void matmul_tiled(const float *M, const float *N, float *P, int width)
{
    __shared__ float Ms[TILE][DEPTH];
    __shared__ float Ns[DEPTH][TILE];

    int tx = threadIdx.x, ty = threadIdx.y;
    int l = ty * TILE + tx;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;

    float sum = 0.0f;
    for (int t = 0; t < width; t += DEPTH) {
        if (l < TILE * DEPTH)
            Ms[l / DEPTH][l % DEPTH] = M[(blockIdx.y * TILE + l / DEPTH) * width + t + l % DEPTH];
        else if (l < 2 * TILE * DEPTH) {
            int j = l - TILE * DEPTH;
            Ns[j / TILE][j % TILE] = N[(t + j / TILE) * width + blockIdx.x * TILE + j % TILE];
        }
        __syncthreads();
#pragma unroll
        for (int i = 0; i < DEPTH; ++i)
            sum += Ms[ty][i] * Ns[i][tx];
        __syncthreads();
    }
    P[row * width + col] = sum;
}
