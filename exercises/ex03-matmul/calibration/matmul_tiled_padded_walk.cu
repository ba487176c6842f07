// Style variant for ex03 `tiled` (measured checks; the issue's "differs only in
// style" kernel): padded Ms rows, pointer walks along M's rows and N's columns.
// Correct and tiled: must pass `tiled-global-loads` and the `faster-than-naive` stand-in.
#define TILE 16

extern "C" __global__ void matmul_tiled(const float *__restrict__ M, const float *__restrict__ N, float *P, int width)
{
    __shared__ float Ms[TILE][TILE + 1];
    __shared__ float Ns[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    const float *m = M + row * width + tx;
    const float *n = N + ty * width + col;
    float sum = 0.0f;
    for (int t = 0; t < width / TILE; ++t, m += TILE, n += TILE * width) {
        Ms[ty][tx] = *m;
        Ns[ty][tx] = *n;
        __syncthreads();
#pragma unroll 4
        for (int i = 0; i < TILE; ++i)
            sum += Ms[ty][i] * Ns[i][tx];
        __syncthreads();
    }
    P[row * width + col] = sum;
}
