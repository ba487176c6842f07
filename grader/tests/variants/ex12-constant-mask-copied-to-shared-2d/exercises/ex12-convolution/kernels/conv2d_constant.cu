// ex12, part `constant`, a variant: the block copies the (2r + 1) x (2r + 1)
// weights of F into a 2-D shared array (thread (x, y) copies weight (y, x)),
// then reads the taps' weights from it; the image from global memory.
#define TILE 16
#define MAX_MASK_RADIUS 3
#define MAX_W (2 * MAX_MASK_RADIUS + 1)

__constant__ float F[MAX_W * MAX_W];

extern "C" __global__ void conv2d_constant(const float *__restrict__ in, float *__restrict__ out, int r, int width, int height)
{
    __shared__ float weights[MAX_W][MAX_W];
    int w = 2 * r + 1;
    if (threadIdx.x < w && threadIdx.y < w)
        weights[threadIdx.y][threadIdx.x] = F[threadIdx.y * w + threadIdx.x];
    __syncthreads();
    int col = blockIdx.x * TILE + threadIdx.x;
    int row = blockIdx.y * TILE + threadIdx.y;
    if (row < height && col < width) {
        float sum = 0.0f;
        for (int i = 0; i < w; i++)
            for (int j = 0; j < w; j++) {
                int y = row - r + i, x = col - r + j;
                if (y >= 0 && y < height && x >= 0 && x < width)
                    sum = fmaf(weights[i][j], in[y * width + x], sum);
            }
        out[row * width + col] = sum;
    }
}
