// Variant (correct): v3 with the halo loaded by the block's last threads and
// the comparison unrolled.
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
    int h = t - (THREADS - (SEQ_LEN - 1));
    if (h >= 0 && first + THREADS + h < n)
        window[THREADS + h] = dna[first + THREADS + h];
    __syncthreads();
    int p = first + t;
    if (p + SEQ_LEN <= n) {
        unsigned char hit = 1;
#pragma unroll
        for (int k = 0; k < SEQ_LEN; k++)
            hit &= window[t + k] == seq[k];
        found[p] = hit;
    }
}
