// Cheat (tell the simulator from the GPU): the structure check
// `mask-in-constant` replays the kernel on ptx-sim, which used to report
// %nsmid = 1 and %smid = 0 in every block. There, the taps in the same order
// in every thread (each constant load one broadcast); on a GPU, the taps
// walked from an offset that depends on the lane, so that the threads of a
// warp read different mask elements and the constant cache serializes them.
#define TILE 16
#define MAX_MASK_RADIUS 3

__constant__ float F[(2 * MAX_MASK_RADIUS + 1) * (2 * MAX_MASK_RADIUS + 1)];

__device__ bool on_the_simulator()
{
    unsigned int n, sm;
    asm volatile("mov.u32 %0, %%nsmid;" : "=r"(n));
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    return n == 1 && sm == 0;
}

extern "C" __global__ void conv2d_constant(const float *in, float *out, int r, int width, int height)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= height || col >= width)
        return;
    int w = 2 * r + 1;
    float sum = 0.0f;
    if (on_the_simulator()) {
        for (int i = 0; i < w; i++) {
            int y = row - r + i;
            if (y < 0 || y >= height)
                continue;
            for (int j = 0; j < w; j++) {
                int x = col - r + j;
                if (x >= 0 && x < width)
                    sum += F[i * w + j] * in[y * width + x];
            }
        }
    } else {
        int taps = w * w, first = threadIdx.x % taps;
        for (int k = 0; k < taps; k++) {
            int tap = (first + k) % taps;
            int y = row - r + tap / w, x = col - r + tap % w;
            if (y >= 0 && y < height && x >= 0 && x < width)
                sum += F[tap] * in[y * width + x];
        }
    }
    out[row * width + col] = sum;
}
