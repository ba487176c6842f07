// ex02, part `dot`: dot product c = sum of a[i] * b[i], with a shared-memory
// reduction per block.
//
// Each block computes the sum of the products it handles and writes it to
// partial[blockIdx.x]; the host adds the gridDim.x partial sums (in double).
// Every index 0 <= i < n must be counted by exactly one thread of one block.
//
// The launch: blocks of 256 threads (blockDim.x == 256) and
// min(ceil(n / 256), 1024) blocks, no dynamic shared memory. `partial` has
// gridDim.x floats. n can be larger than the number of threads (use a
// grid-stride loop) and is usually not a multiple of 256 (threads past the end
// must add nothing, but they still take part in the block's reduction).
//
// Keep the `extern "C"` and the name and parameters exactly as they are: the
// grader looks the kernel up by name.

#define THREADS 256 // == blockDim.x, fixed by the host

extern "C" __global__ void dot(const float *a, const float *b, int n, float *partial)
{
    // TODO 1: grid-stride loop: starting at blockIdx.x * blockDim.x + threadIdx.x
    //         and stepping by gridDim.x * blockDim.x, add a[i] * b[i] into a
    //         register (a local float). Neighbouring threads read neighbouring
    //         elements, so a warp's loads are coalesced.
    // TODO 2: store that register in a __shared__ float cache[THREADS], one
    //         slot per thread (threads with no element store 0).
    // TODO 3: reduce cache[] to cache[0] with a tree: at each step, half of the
    //         remaining threads add the other half's values into theirs
    //         (seed 001's reduction; see this exercise's README). Every step
    //         needs a __syncthreads() so that no thread reads a slot before it
    //         is written.
    // TODO 4: thread 0 writes cache[0] to partial[blockIdx.x].
}
