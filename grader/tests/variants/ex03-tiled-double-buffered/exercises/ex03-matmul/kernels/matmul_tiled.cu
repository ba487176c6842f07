// Variant: double-buffered tiles. Two pairs of tiles alternate between
// phases: the next phase's tiles are stored into the other pair while this
// phase's products read the current one, so one barrier per phase orders
// everything (a store into a pair happens two barriers after its last read).
#define TILE 16
extern "C" __global__ void matmul_tiled(const float *M, const float *N, float *P, int width)
{
    __shared__ float Ms[2][TILE][TILE];
    __shared__ float Ns[2][TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    int phases = width / TILE;
    Ms[0][ty][tx] = M[row * width + tx];
    Ns[0][ty][tx] = N[ty * width + col];
    __syncthreads();
    float sum = 0.0f;
    for (int t = 0; t < phases; ++t) {
        int cur = t & 1, nxt = cur ^ 1;
        if (t + 1 < phases) {
            Ms[nxt][ty][tx] = M[row * width + (t + 1) * TILE + tx];
            Ns[nxt][ty][tx] = N[((t + 1) * TILE + ty) * width + col];
        }
        for (int i = 0; i < TILE; ++i)
            sum += Ms[cur][ty][i] * Ns[cur][i][tx];
        __syncthreads();
    }
    P[row * width + col] = sum;
}
