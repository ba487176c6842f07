// Variant: no barrier between staging the window and reading it: a thread
// reads letters that other warps may not have stored yet.
#define THREADS 256
#define SEQ_LEN 8
extern "C" __global__ void search_v2(const unsigned char *dna, int n, const unsigned char *seq, unsigned char *found)
{
    __shared__ unsigned char window[THREADS + SEQ_LEN - 1];
    int t = threadIdx.x;
    int first = blockIdx.x * THREADS;
    if (first + t < n)
        window[t] = dna[first + t];
    if (t < SEQ_LEN - 1 && first + THREADS + t < n)
        window[THREADS + t] = dna[first + THREADS + t];
    int p = first + t;
    if (p > n - SEQ_LEN)
        return;
    unsigned char hit = 1;
    for (int k = 0; k < SEQ_LEN; k++)
        hit &= window[t + k] == seq[k];
    found[p] = hit;
}
