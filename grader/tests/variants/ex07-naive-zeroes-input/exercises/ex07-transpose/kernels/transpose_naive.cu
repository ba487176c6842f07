// ex07 `naive`, variant: a right transpose that zeroes each input element
// after reading it ("the input is used up"). Every element is read by the
// thread that zeroes it, so the output is right; the input is gone.
#define TILE_DIM 32
#define BLOCK_ROWS 8

extern "C" __global__ void transpose_naive(float *out, const float *in, int width, int height)
{
    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    if (x >= width)
        return;
    float *used = (float *)in;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        if (y + j < height) {
            out[x * height + (y + j)] = in[(y + j) * width + x];
            used[(y + j) * width + x] = 0.0f;
        }
}
