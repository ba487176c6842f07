// Variant (correct): the halo is loaded by the last SEQ_LEN - 1 threads of the
// block (the warp that is there anyway), the sequence kept in registers.
#define THREADS 256
#define SEQ_LEN 8
extern "C" __global__ void search_v2(const unsigned char *dna, int n, const unsigned char *seq, unsigned char *found)
{
    __shared__ unsigned char window[THREADS + SEQ_LEN - 1];
    int t = threadIdx.x;
    int first = blockIdx.x * THREADS;
    if (first + t < n)
        window[t] = dna[first + t];
    int h = t - (THREADS - (SEQ_LEN - 1));
    if (h >= 0 && first + THREADS + h < n)
        window[THREADS + h] = dna[first + THREADS + h];
    unsigned char s[SEQ_LEN];
#pragma unroll
    for (int k = 0; k < SEQ_LEN; k++)
        s[k] = seq[k];
    __syncthreads();
    int p = first + t;
    if (p + SEQ_LEN <= n) {
        bool hit = true;
#pragma unroll
        for (int k = 0; k < SEQ_LEN; k++)
            hit = hit && window[t + k] == s[k];
        found[p] = hit;
    }
}
