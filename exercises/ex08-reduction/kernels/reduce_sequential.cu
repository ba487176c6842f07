// ex08, part `sequential`: sum reduction with sequential addressing.
//
// Same task as reduce_interleaved.cu: block b sums the elements
// b*256 .. b*256+255 of `in` (those at index >= n count as 0) and writes the
// sum to partial[blockIdx.x]. Blocks of 256 threads (blockDim.x == 256),
// ceil(n / 256) blocks, one element per thread, no dynamic shared memory.
//
// This time the threads that work are the FIRST `stride` threads of the block,
// and the stride halves at every step (seed 001, "A Better Implementation"):
//
//     step 1: threads 0..127 add partialSum[t + 128] into partialSum[t]
//     step 2: threads 0..63  add partialSum[t + 64]  ...
//     ...
//     step 8: thread 0 adds partialSum[1] into partialSum[0]
//
// Whole warps are either all busy or all idle, so no warp diverges until fewer
// than 32 threads work. Careful: the slide's loop has typos. Start at
// stride = blockDim.x / 2, halve with `stride >>= 1` (not `stride >> 1`), and
// go down to stride == 1 included.
//
// The grader times your kernel against the interleaved pattern on 2^26 ints:
// yours must be clearly faster.

#define THREADS 256 // == blockDim.x, fixed by the host

extern "C" __global__ void reduce_sequential(const int *in, int n, int *partial)
{
    // TODO 1: declare __shared__ int partialSum[THREADS]; load element
    //         blockIdx.x * blockDim.x + t into partialSum[t], or 0 past the end.
    // TODO 2: the tree: at each step the threads t < stride add
    //         partialSum[t + stride] into partialSum[t]; stride starts at half
    //         the block and halves down to 1. Put a __syncthreads() wherever a
    //         thread could otherwise read a value another thread has not
    //         written yet.
    // TODO 3: thread 0 writes partialSum[0] to partial[blockIdx.x].
}
