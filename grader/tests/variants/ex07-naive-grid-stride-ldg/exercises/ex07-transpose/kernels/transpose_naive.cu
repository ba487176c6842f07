// Variant (correct): one element per thread and a grid-stride loop over the
// rows, __ldg reads.
#define TILE_DIM 32
extern "C" __global__ void transpose_naive(float *__restrict__ out, const float *__restrict__ in, int width, int height)
{
    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    if (x >= width)
        return;
    for (int y = blockIdx.y * TILE_DIM + threadIdx.y; y < min(height, (int)(blockIdx.y + 1) * TILE_DIM); y += blockDim.y)
        out[x * height + y] = __ldg(&in[y * width + x]);
}
