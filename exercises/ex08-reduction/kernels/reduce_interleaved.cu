// ex08, part `interleaved`: sum reduction with interleaved addressing.
//
// Each block sums ITS OWN 256 elements of `in` and writes that sum to
// partial[blockIdx.x]; the host adds the partial sums. Block b owns the
// elements b*256 .. b*256+255. The last block may run past the end of the
// array (n is usually not a multiple of 256): elements at index >= n count as 0.
//
// The launch: blocks of 256 threads (blockDim.x == 256), ceil(n / 256) blocks,
// one element per thread, no dynamic shared memory. `partial` has one int per
// block. Values are small enough that no block sum overflows an int.
//
// This part is the slides' first version (seed 001, "A Simple Implementation"):
//
//     for (unsigned int stride = 1; stride < blockDim.x; stride *= 2) {
//         __syncthreads();
//         if (t % (2*stride) == 0)
//             partialSum[t] += partialSum[t+stride];
//     }
//
// Threads whose index is not a multiple of 2*stride sit idle, interleaved with
// working threads in the same warp: the warp diverges at every step.
//
// Keep the `extern "C"` and the name and parameters exactly as they are: the
// grader looks the kernel up by name.

#define THREADS 256 // == blockDim.x, fixed by the host

extern "C" __global__ void reduce_interleaved(const int *in, int n, int *partial)
{
    // TODO 1: declare the block's partial sums: __shared__ int partialSum[THREADS];
    // TODO 2: thread t loads its element i = blockIdx.x * blockDim.x + t into
    //         partialSum[t], or 0 when i >= n (never read past the end of `in`).
    // TODO 3: the loop above. The __syncthreads() at the top of each step makes
    //         sure every thread's value of the previous step (or the load) is in
    //         shared memory before anyone reads it.
    // TODO 4: thread 0 writes partialSum[0] to partial[blockIdx.x].
}
