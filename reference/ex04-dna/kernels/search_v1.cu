// ex04 `v1`, reference solution: one thread per start position, every letter
// and the sequence read straight from global memory.
#define THREADS 256
#define SEQ_LEN 8

extern "C" __global__ void search_v1(const unsigned char *dna, int n, const unsigned char *seq, unsigned char *found)
{
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p > n - SEQ_LEN)
        return;
    // No early exit: all 8 comparisons, so the warp never diverges.
    unsigned char hit = 1;
    for (int k = 0; k < SEQ_LEN; k++)
        hit &= dna[p + k] == seq[k];
    found[p] = hit;
}
