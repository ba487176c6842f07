// Variant (correct): __restrict__ and __ldg for the staging loads; the window
// loaded in one loop of two rounds.
#define THREADS 256
#define SEQ_LEN 8
extern "C" __global__ void search_v2(const unsigned char *__restrict__ dna, int n,
                                     const unsigned char *__restrict__ seq, unsigned char *__restrict__ found)
{
    __shared__ unsigned char window[THREADS + SEQ_LEN - 1];
    int first = blockIdx.x * THREADS;
    for (int j = threadIdx.x; j < THREADS + SEQ_LEN - 1; j += THREADS)
        if (first + j < n)
            window[j] = __ldg(&dna[first + j]);
    __syncthreads();
    int t = threadIdx.x;
    int p = first + t;
    if (p > n - SEQ_LEN)
        return;
    unsigned char hit = 1;
#pragma unroll
    for (int k = 0; k < SEQ_LEN; k++)
        hit &= window[t + k] == __ldg(&seq[k]);
    found[p] = hit;
}
