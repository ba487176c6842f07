// ex10, part `global`: a 256-bin histogram of n bytes with one global atomic per byte.
//
// bins[v] must end up holding how many of data[0 .. n-1] equal v. The bins are
// 0 before the launch (the grader zeroes them); the kernel only adds.
//
// Launch (fixed by the grader): blocks of 256 threads, ceil(n / 256) blocks
// (one block when n = 0). One thread per byte; the last block may have threads
// with no byte. n is anything from 0 to about 2^31.
extern "C" __global__ void histogram_global(const unsigned char *data, unsigned int n, unsigned int *bins)
{
    // TODO 1: this thread's byte: i from blockIdx.x, blockDim.x and threadIdx.x.
    // TODO 2: if i < n, add 1 to bins[data[i]] with atomicAdd (threads of the whole
    //         grid add to the same bins at once: a plain ++ would lose counts).
}
