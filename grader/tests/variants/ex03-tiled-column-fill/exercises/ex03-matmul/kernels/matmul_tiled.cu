// Variant: both tiles filled down their columns. Thread (tx, ty) stores
// Ms[tx][ty] and Ns[tx][ty], so consecutive tx load from consecutive rows of
// M and N (width floats apart): 16 sectors per warp request where a fill
// along rows needs 4. The product is right and the tiles cut global loads
// per multiply-add as the notes' kernel does; the loads are uncoalesced.
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
        Ms[tx][ty] = M[(blockIdx.y * TILE + tx) * width + t * TILE + ty];
        Ns[tx][ty] = N[(t * TILE + tx) * width + blockIdx.x * TILE + ty];
        __syncthreads();
        for (int i = 0; i < TILE; ++i)
            sum += Ms[ty][i] * Ns[i][tx];
        __syncthreads();
    }
    P[row * width + col] = sum;
}
