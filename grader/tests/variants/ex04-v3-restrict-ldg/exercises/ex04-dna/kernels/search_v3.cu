// Variant (correct): __restrict__ and __ldg staging, one staging loop.
#define THREADS 256
#define SEQ_LEN 8
__constant__ unsigned char seq[SEQ_LEN];
extern "C" __global__ void search_v3(const unsigned char *__restrict__ dna, int n, unsigned char *__restrict__ found)
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
    for (int k = 0; k < SEQ_LEN; k++)
        hit &= window[t + k] == seq[k];
    found[p] = hit;
}
