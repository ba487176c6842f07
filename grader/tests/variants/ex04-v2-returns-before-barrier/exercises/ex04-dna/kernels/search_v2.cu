// ex04 `v2`, a real mistake: every thread copies its letter into the window,
// then the threads with no start position return before the barrier. The
// numbers are right on a GPU (it releases a barrier once the threads that did
// not exit arrive), but the README says not to return before the barrier:
// the PTX ISA leaves a __syncthreads() that some threads skip undefined.
#define THREADS 256
#define SEQ_LEN 8

extern "C" __global__ void search_v2(const unsigned char *dna, int n, const unsigned char *seq, unsigned char *found)
{
    __shared__ unsigned char window[THREADS + SEQ_LEN - 1];
    int t = threadIdx.x;
    int first = blockIdx.x * THREADS;
    int p = first + t;

    if (p < n)
        window[t] = dna[p];
    if (t < SEQ_LEN - 1 && first + THREADS + t < n)
        window[THREADS + t] = dna[first + THREADS + t];
    if (p > n - SEQ_LEN)
        return;
    __syncthreads();

    unsigned char hit = 1;
    for (int k = 0; k < SEQ_LEN; k++)
        hit &= window[t + k] == seq[k];
    found[p] = hit;
}
