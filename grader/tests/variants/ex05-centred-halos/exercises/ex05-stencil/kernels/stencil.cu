// Variant (correct): the notes' layout. tmp is indexed from the window's
// centre, the first RADIUS threads load the left and the right halo.
#define BLOCK_SIZE 512
#define RADIUS 3
extern "C" __global__ void stencil_1d(const int *in, int *out, int n)
{
    __shared__ int tmp[BLOCK_SIZE + 2 * RADIUS];
    int t = threadIdx.x;
    int g = blockIdx.x * BLOCK_SIZE + t + RADIUS; // centre, in padded coordinates
    int l = t + RADIUS;
    int padded = n + 2 * RADIUS;
    if (g < padded)
        tmp[l] = in[g];
    if (t < RADIUS) {
        tmp[l - RADIUS] = in[g - RADIUS];
        if (g + BLOCK_SIZE < padded)
            tmp[l + BLOCK_SIZE] = in[g + BLOCK_SIZE];
    }
    __syncthreads();
    if (g - RADIUS < n) {
        int sum = 0;
        for (int k = -RADIUS; k <= RADIUS; k++)
            sum += tmp[l + k];
        out[g - RADIUS] = sum / (2 * RADIUS + 1);
    }
}
