// Variant (slow, a real mistake): the tiles are only 4 deep along k (Ms is
// 16 x 4, Ns 4 x 16) "to save shared memory", loaded by the first 128 threads.
// As few global loads per multiply-add as 16 x 16 tiles, but a phase now holds
// 4 multiply-adds between its two barriers instead of 16, so the block spends
// its time loading and waiting.
#define TILE 16
#define DEPTH 4

extern "C" __global__ void matmul_rect(const float *M, const float *N, float *P, int m, int k, int n)
{
    __shared__ float Ms[TILE][DEPTH];
    __shared__ float Ns[DEPTH][TILE];

    int tx = threadIdx.x, ty = threadIdx.y;
    int l = ty * TILE + tx;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;

    float sum = 0.0f;
    for (int t = 0; t < k; t += DEPTH) {
        if (l < TILE * DEPTH) {
            int r = blockIdx.y * TILE + l / DEPTH, c = t + l % DEPTH;
            Ms[l / DEPTH][l % DEPTH] = (r < m && c < k) ? M[r * k + c] : 0.0f;
        } else if (l < 2 * TILE * DEPTH) {
            int j = l - TILE * DEPTH;
            int r = t + j / TILE, c = blockIdx.x * TILE + j % TILE;
            Ns[j / TILE][j % TILE] = (r < k && c < n) ? N[r * n + c] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int i = 0; i < DEPTH; ++i)
            sum += Ms[ty][i] * Ns[i][tx];
        __syncthreads();
    }
    if (row < m && col < n)
        P[row * n + col] = sum;
}
