// Variant (slow, a real mistake): the first four threads copy the window, each
// its own contiguous quarter (66 letters), while the other 252 threads wait at
// the barrier. Every letter is still read once from global memory, but by 4
// lanes a warp-load instead of 32, each lane 66 bytes from the next.
#define THREADS 256
#define SEQ_LEN 8
#define WINDOW (THREADS + SEQ_LEN - 1)
#define LOADERS 4
#define SLICE ((WINDOW + LOADERS - 1) / LOADERS)

extern "C" __global__ void search_v2(const unsigned char *dna, int n, const unsigned char *seq, unsigned char *found)
{
    __shared__ unsigned char window[WINDOW];
    int t = threadIdx.x;
    int first = blockIdx.x * THREADS;

    if (t < LOADERS) {
        for (int k = t * SLICE; k < (t + 1) * SLICE && k < WINDOW; k++)
            if (first + k < n)
                window[k] = dna[first + k];
    }
    __syncthreads();

    int p = first + t;
    if (p > n - SEQ_LEN)
        return;
    unsigned char hit = 1;
    for (int k = 0; k < SEQ_LEN; k++)
        hit &= window[t + k] == seq[k];
    found[p] = hit;
}
