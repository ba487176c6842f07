// ex04, part `v2`: the same search, with the block's window of the string
// staged in shared memory.
//
// Same task and launch as search_v1.cu: found[p] = 1 if dna[p..p+8) equals seq,
// else 0, for every start position 0 <= p <= n - SEQ_LEN; blocks of
// THREADS = 256 threads, ceil((n - SEQ_LEN + 1) / 256) blocks.
//
// In v1 every letter is read from global memory by SEQ_LEN different threads.
// Here block b handles the start positions b*THREADS .. b*THREADS + THREADS-1,
// and those need the letters b*THREADS .. b*THREADS + THREADS + SEQ_LEN - 2:
// THREADS + SEQ_LEN - 1 letters (the block's own letters plus a halo of
// SEQ_LEN - 1 letters that also belong to the next block). Copy them once into
// shared memory, wait, then let every thread compare from there.
//
// The grader checks the PTX for shared-memory stores and loads and a barrier,
// and times your kernel against the v1 pattern on 64 Mi letters.
#define THREADS 256
#define SEQ_LEN 8

extern "C" __global__ void search_v2(const unsigned char *dna, int n, const unsigned char *seq, unsigned char *found)
{
    // TODO 1: declare the block's window:
    //         __shared__ unsigned char window[THREADS + SEQ_LEN - 1];
    // TODO 2: copy dna[b*THREADS .. b*THREADS + THREADS + SEQ_LEN - 2] into
    //         window: each thread copies the letter at its own offset, and the
    //         first SEQ_LEN - 1 threads also copy one letter of the halo. Copy
    //         only letters that exist (index < n): the last block is partial.
    // TODO 3: __syncthreads(), so that no thread reads the window before every
    //         letter is in. Every thread of the block must reach it: do not
    //         return early before the barrier.
    // TODO 4: if this thread's start position p exists, compare window[t + k]
    //         with seq[k] (t = threadIdx.x) and write found[p] as in v1.
}
