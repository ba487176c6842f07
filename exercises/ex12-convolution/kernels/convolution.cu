// ex12, part `convolution`: 2D convolution: naive, constant mask, tiled.
//
// Scale a vector: out[i] = 2 * in[i] for every i in 0 .. n-1.
//
// Launch (fixed by the grader): blocks of 256 threads, ceil(n / 256) blocks.
// One thread per element; the last block may have threads with no element
// (n is any size from 1 to 2^30).
extern "C" __global__ void convolution(const float *in, float *out, int n)
{
    // TODO 1: this thread's element: i from blockIdx.x, blockDim.x and threadIdx.x,
    //         so that consecutive threads handle consecutive elements.
    // TODO 2: if i < n, write out[i] = 2 * in[i].
}
