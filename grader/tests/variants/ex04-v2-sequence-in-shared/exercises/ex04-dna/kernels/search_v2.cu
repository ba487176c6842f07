// Variant (correct): the sequence is staged in shared memory too, by the first
// SEQ_LEN threads; comparisons count mismatches instead of and-ing hits.
#define THREADS 256
#define SEQ_LEN 8
extern "C" __global__ void search_v2(const unsigned char *dna, int n, const unsigned char *seq, unsigned char *found)
{
    __shared__ unsigned char window[THREADS + SEQ_LEN - 1];
    __shared__ unsigned char s[SEQ_LEN];
    int t = threadIdx.x;
    int first = blockIdx.x * THREADS;
    if (first + t < n)
        window[t] = dna[first + t];
    if (t < SEQ_LEN - 1 && first + THREADS + t < n)
        window[THREADS + t] = dna[first + THREADS + t];
    if (t < SEQ_LEN)
        s[t] = seq[t];
    __syncthreads();
    int p = first + t;
    if (p > n - SEQ_LEN)
        return;
    int misses = 0;
    for (int k = 0; k < SEQ_LEN; k++)
        misses += window[t + k] != s[k];
    found[p] = misses == 0;
}
