// ex04 `v2`, reference solution: the block's window of the string
// (THREADS + SEQ_LEN - 1 letters) staged in shared memory, then compared there.
#define THREADS 256
#define SEQ_LEN 8

extern "C" __global__ void search_v2(const unsigned char *dna, int n, const unsigned char *seq, unsigned char *found)
{
    __shared__ unsigned char window[THREADS + SEQ_LEN - 1];
    int t = threadIdx.x;
    int first = blockIdx.x * THREADS;

    // Every thread stages its own letter, the first SEQ_LEN - 1 threads also the
    // halo just past the block; neighbours' loads are neighbours' addresses, so
    // each warp reads one contiguous run (coalesced). Nothing past the string.
    if (first + t < n)
        window[t] = dna[first + t];
    if (t < SEQ_LEN - 1 && first + THREADS + t < n)
        window[THREADS + t] = dna[first + THREADS + t];
    // Every thread reaches the barrier, including those past the last position:
    // their letters are part of the window too.
    __syncthreads();

    int p = first + t;
    if (p > n - SEQ_LEN)
        return;
    unsigned char hit = 1;
    for (int k = 0; k < SEQ_LEN; k++)
        hit &= window[t + k] == seq[k];
    found[p] = hit;
}
