// Variant (correct): stops at the first mismatch (all threads of a warp still
// read the same seq[k] at the same time: a broadcast).
#define THREADS 256
#define SEQ_LEN 8
__constant__ unsigned char seq[SEQ_LEN];
extern "C" __global__ void search_v3(const unsigned char *dna, int n, unsigned char *found)
{
    __shared__ unsigned char window[THREADS + SEQ_LEN - 1];
    int t = threadIdx.x;
    int first = blockIdx.x * THREADS;
    if (first + t < n)
        window[t] = dna[first + t];
    if (t < SEQ_LEN - 1 && first + THREADS + t < n)
        window[THREADS + t] = dna[first + THREADS + t];
    __syncthreads();
    int p = first + t;
    if (p > n - SEQ_LEN)
        return;
    int k = 0;
    while (k < SEQ_LEN && window[t + k] == seq[k])
        k++;
    found[p] = k == SEQ_LEN;
}
