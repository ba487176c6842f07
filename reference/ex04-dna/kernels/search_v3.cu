// ex04 `v3`, reference solution: as v2, with the sequence in constant memory,
// written by the host (cudaMemcpyToSymbol) before the launch.
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
    // All threads of a warp read seq[k] at the same time: one constant-cache
    // access broadcast to the whole warp.
    unsigned char hit = 1;
    for (int k = 0; k < SEQ_LEN; k++)
        hit &= window[t + k] == seq[k];
    found[p] = hit;
}
