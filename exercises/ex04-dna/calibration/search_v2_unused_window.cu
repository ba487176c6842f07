// Wrong-technique variant for ex04 `v2` (measured checks): stages the window
// behind a barrier and reads its first letter back, but compares dna from
// global memory. Correct, spells the technique: must fail `shared-window`.
#define THREADS 256
#define SEQ_LEN 8

extern "C" __global__ void search_v2(const unsigned char *dna, int n, const unsigned char *seq, unsigned char *found)
{
    __shared__ unsigned char window[THREADS + SEQ_LEN - 1];
    int t = threadIdx.x;
    int first = blockIdx.x * THREADS;
    if (first + t < n)
        window[t] = dna[first + t];
    __syncthreads();
    int p = first + t;
    if (p > n - SEQ_LEN)
        return;
    unsigned char hit = window[t] == dna[p];
    for (int k = 0; k < SEQ_LEN; k++)
        hit &= dna[p + k] == seq[k];
    found[p] = hit;
}
