// Variant (correct): unpadded tiles, pointer walk with a phase counter, shared
// reads through row pointers.
#define TILE 16
extern "C" __global__ void matmul_tiled(const float *M, const float *N, float *P, int width)
{
    __shared__ float Ms[TILE][TILE];
    __shared__ float Ns[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    const float *m = M + (blockIdx.y * TILE + ty) * width + tx;
    const float *n = N + ty * width + blockIdx.x * TILE + tx;
    float sum = 0.0f;
    for (int phases = width / TILE; phases > 0; --phases) {
        Ms[ty][tx] = *m;
        Ns[ty][tx] = *n;
        m += TILE;
        n += TILE * width;
        __syncthreads();
        const float *ms = Ms[ty];
#pragma unroll
        for (int i = 0; i < TILE; ++i)
            sum += ms[i] * Ns[i][tx];
        __syncthreads();
    }
    P[(blockIdx.y * TILE + ty) * width + blockIdx.x * TILE + tx] = sum;
}
