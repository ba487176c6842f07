// ex01, part `global`: Monte Carlo pi with a counter in global memory.
//
// The host drew n random points (x[i], y[i]) in [0,1) x [0,1) and zeroed *hits.
// Count how many points fall inside the unit circle (x*x + y*y <= 1) into *hits;
// the host then prints pi ~= 4 * hits / n.
//
// The launch: blocks of 256 threads, at most 1024 blocks. n can be larger than
// the number of threads (use a grid-stride loop) and is usually not a multiple of
// 256 (threads past the end must do nothing).
//
// Keep the `extern "C"` and the name and parameters exactly as they are: the
// grader looks the kernel up by name.

extern "C" __global__ void pi_global(const float *x, const float *y, int n, unsigned int *hits)
{
    // TODO 1: compute this thread's first index and the grid-wide stride
    //         (blockIdx.x, blockDim.x, threadIdx.x, gridDim.x).
    // TODO 2: for every index i this thread owns, test whether (x[i], y[i]) is
    //         inside the circle.
    // TODO 3: add each hit to *hits. Thousands of threads update the same counter
    //         at once: a plain `*hits += 1` loses updates. Use atomicAdd.
}
