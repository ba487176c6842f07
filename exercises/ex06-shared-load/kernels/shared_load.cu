// ex06, part `load`: two vectors into one dynamically sized shared buffer.
//
// Block b owns one pair of byte vectors of SIZE = 256 elements each:
// in1[b*SIZE .. b*SIZE + 255] and in2[b*SIZE .. b*SIZE + 255], and writes
// out[b*SIZE .. b*SIZE + 255]. Thread t of block b computes one lag of the
// circular cross-correlation of its block's pair:
//
//     out[b*SIZE + t] = sum over j = 0 .. SIZE-1 of  in1[b*SIZE + j] * in2[b*SIZE + (j + t) % SIZE]
//
// in exact unsigned integers (at most 256 * 255 * 255, which fits).
//
// Every thread reads all 512 input bytes of its block, so the block first
// copies both vectors into shared memory, ONE element of each per thread, and
// then computes from there: 2 global loads per thread instead of 512.
//
// Launch (fixed by the grader): blocks of SIZE = 256 threads, one block per
// pair, and 2*SIZE*sizeof(unsigned char) = 512 bytes of DYNAMIC shared memory
// (the third number in <<<grid, block, bytes>>>). Nothing more: using bytes
// past the 512 you are given is undefined behaviour.
#define SIZE 256

extern "C" __global__ void compute(unsigned int *out, const unsigned char *in1, const unsigned char *in2)
{
    // TODO 1: declare the shared buffer `in` as an extern __shared__ array of
    //         unsigned char with no size: its size comes from the launch.
    //         (The slides write `extern __shared__ char *in;`, which declares
    //         a pointer, not a buffer.)
    //
    // TODO 2: with tid = blockIdx.x * blockDim.x + threadIdx.x (as in the
    //         slides), copy in1[tid] into the first half of the buffer and
    //         in2[tid] into the second half, at the thread's own position:
    //         in1 first, in2 right after it.
    //
    // TODO 3: wait until every thread of the block has copied its two bytes.
    //
    // TODO 4: compute this thread's sum from the shared buffer only, and
    //         write it to out[tid].
}
