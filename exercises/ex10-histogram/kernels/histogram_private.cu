// ex10, part `private`: the same histogram, privatized: each block counts its
// bytes in its own 256 bins in shared memory, then adds them to the global bins
// with at most one atomic per bin.
//
// bins[v] must end up holding how many of data[0 .. n-1] equal v; it is 0
// before the launch. Launch (fixed by the grader): blocks of 256 threads,
// ceil(n / 256) blocks (one block when n = 0), one thread per byte.
#define NUM_BINS 256

extern "C" __global__ void histogram_private(const unsigned char *data, unsigned int n, unsigned int *bins)
{
    // TODO 1: declare the block's bins: __shared__ unsigned int bins_s[NUM_BINS];
    //         and set them to 0 (the block's threads share the work, a loop from
    //         threadIdx.x in steps of blockDim.x), then __syncthreads().
    // TODO 2: if this thread's byte i < n, add 1 to bins_s[data[i]] with atomicAdd
    //         (a shared atomic: only this block's threads contend for it).
    // TODO 3: __syncthreads(), so that every thread has counted; then each thread
    //         takes some bins (the same loop as TODO 1) and adds a bin's count to
    //         bins[b] with one atomicAdd (skipping bins that are 0 is allowed).
}
