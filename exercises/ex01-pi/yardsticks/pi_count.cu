// The grader's own count for the timed check: what every timed launch of the
// student's kernel must have counted, from the same points. Not the lesson's
// technique (no shared memory): each thread counts in a register, the warp
// adds its 32 counts with shuffles, and one lane per warp adds to *hits.
//
// The points are full-precision floats, so a float x*x + y*y is rounded: a
// point this close to the circle (|x^2 + y^2 - 1| <= NEAR, exact in double:
// coordinates are multiples of 2^-24) may be counted either way by a right
// kernel, with or without FMA, or through a square root of a few ulps. The
// grader counts in double, and counts those points apart in *near.
#define NEAR (1.0 / 1048576.0) // 2^-20: float's rounding of x*x + y*y near 1 is at most about 2^-23

extern "C" __global__ void pi_count(const float *x, const float *y, int n, unsigned int *hits, unsigned int *near)
{
    unsigned int mine = 0, close = 0;
    unsigned int stride = gridDim.x * blockDim.x;
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < (unsigned int)n; i += stride) {
        double r2 = (double)x[i] * x[i] + (double)y[i] * y[i];
        mine += r2 <= 1.0;
        close += fabs(r2 - 1.0) <= NEAR;
    }
    // Every lane of the warp is here (no thread returned early): a full mask.
    for (int offset = 16; offset > 0; offset >>= 1) {
        mine += __shfl_down_sync(0xffffffffu, mine, offset);
        close += __shfl_down_sync(0xffffffffu, close, offset);
    }
    if ((threadIdx.x & 31) == 0 && mine > 0)
        atomicAdd(hits, mine);
    if ((threadIdx.x & 31) == 0 && close > 0)
        atomicAdd(near, close);
}
