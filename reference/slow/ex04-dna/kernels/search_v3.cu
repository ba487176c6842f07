// Calibration variant for ex04 `v3`: correct, stages the window in shared
// memory and reads the sequence from __constant__ memory (so it passes the
// structure checks), but each thread walks the sequence from its own starting
// letter, so the 32 threads of a warp read 8 different addresses of `seq` at
// once. Constant memory serves one address per access and serializes the rest
// (the seed: fast "when all threads access the same address simultaneously").
// It must fail `v3::perf::share-of-v1`.
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
    unsigned char hit = 1;
    for (int j = 0; j < SEQ_LEN; j++) {
        int k = (j + t) % SEQ_LEN;
        hit &= window[t + k] == seq[k];
    }
    found[p] = hit;
}
