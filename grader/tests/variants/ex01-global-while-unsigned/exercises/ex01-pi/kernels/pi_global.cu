// Variant: a grid-stride while loop with unsigned indices and the point read
// into locals first; one global atomicAdd per hit. Correct and coalesced:
// with clang the lanes drift apart in the loop (the atomic is a branch), so a
// warp's points are loaded by requests of a few lanes each.
extern "C" __global__ void pi_global(const float *x, const float *y, int n, unsigned int *hits)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int stride = gridDim.x * blockDim.x;
    while (i < (unsigned int)n) {
        float px = x[i], py = y[i];
        if (px * px + py * py <= 1.0f)
            atomicAdd(hits, 1u);
        i += stride;
    }
}
