// Style variant for ex04 `v3` (measured checks): the window staged with a
// block-stride loop, the comparison unrolled and early-exiting. Correct, the
// sequence read as broadcasts: must pass every v3 check and the stand-in.
#define THREADS 256
#define SEQ_LEN 8

__constant__ unsigned char seq[SEQ_LEN];

extern "C" __global__ void search_v3(const unsigned char *__restrict__ dna, int n, unsigned char *found)
{
    __shared__ unsigned char window[THREADS + SEQ_LEN - 1];
    int first = blockIdx.x * THREADS;
    for (int j = threadIdx.x; j < THREADS + SEQ_LEN - 1; j += THREADS)
        if (first + j < n)
            window[j] = dna[first + j];
    __syncthreads();
    int p = first + threadIdx.x;
    if (p > n - SEQ_LEN)
        return;
    unsigned char hit = 1;
#pragma unroll
    for (int k = 0; k < SEQ_LEN; k++)
        hit &= window[threadIdx.x + k] == seq[k];
    found[p] = hit;
}
