// ex05, part `stencil`: a 1D stencil of radius 3, with the halo in shared memory.
//
// Each output is the mean of the 2*RADIUS+1 = 7 inputs around it, in integers:
//
//     out[i] = (in[i] + in[i+1] + ... + in[i + 2*RADIUS]) / (2*RADIUS + 1)    for i in 0 .. n-1
//
// `in` is PADDED by the host: it holds n + 2*RADIUS elements, RADIUS extra ones
// before the signal and RADIUS after it, so output i is centred on in[i + RADIUS]
// and no output needs a special case at the borders. Sum in `int` (the values
// are small enough: |in[j]| < 2^28) and divide with C's `/` (it truncates
// toward zero: -10 / 7 == -1).
//
// Launch (fixed by the grader): blocks of BLOCK_SIZE = 512 threads,
// ceil(n / 512) blocks, no dynamic shared memory. One thread per output; the
// last block may have threads with no output (n is any size from 1 to 2^30).
//
// Why shared memory: neighbouring outputs share 6 of their 7 inputs. Reading
// them from global memory costs 7 loads per output; staging the block's inputs
// once in shared memory costs about 1 (plus a halo of RADIUS on each side).
#define BLOCK_SIZE 512
#define RADIUS 3

extern "C" __global__ void stencil_1d(const int *in, int *out, int n)
{
    // TODO 1: declare the block's window in shared memory: BLOCK_SIZE outputs
    //         need BLOCK_SIZE + 2*RADIUS inputs (the block's own plus a halo
    //         of RADIUS on each side).
    //
    // TODO 2: fill it. The block's first output is i = blockIdx.x * BLOCK_SIZE,
    //         and its window starts at that same index of the padded `in`.
    //         Each thread copies one element; a few threads copy one more to
    //         cover the halo. Keep the reads coalesced (consecutive threads,
    //         consecutive addresses), and never read past in[n + 2*RADIUS - 1]:
    //         in the last block some copies must be skipped.
    //
    // TODO 3: wait until the whole window is in shared memory (a thread's
    //         neighbours were copied by other threads).
    //
    // TODO 4: threads with an output (i < n) add up their 7 inputs, reading
    //         them from the shared window, and write the mean to out[i].
}
