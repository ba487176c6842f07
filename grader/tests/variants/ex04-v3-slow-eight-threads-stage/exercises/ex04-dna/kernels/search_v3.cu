// Variant (slow, a real mistake): the first SEQ_LEN threads copy the window,
// each its own contiguous slice of 33 letters, while the other 248 threads
// wait at the barrier. Every letter is still read once from global memory, but
// by 8 lanes a warp-load instead of 32, each lane 33 bytes from the next.
#define THREADS 256
#define SEQ_LEN 8
#define WINDOW (THREADS + SEQ_LEN - 1)
#define SLICE ((WINDOW + SEQ_LEN - 1) / SEQ_LEN) // 33

__constant__ unsigned char seq[SEQ_LEN];

extern "C" __global__ void search_v3(const unsigned char *dna, int n, unsigned char *found)
{
    __shared__ unsigned char window[WINDOW];
    int t = threadIdx.x;
    int first = blockIdx.x * THREADS;

    if (t < SEQ_LEN) {
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
