// Calibration variant for ex04 `v2`: correct, stages the window in shared
// memory behind a barrier (so it passes the structure checks), but thread 0
// copies all THREADS + SEQ_LEN - 1 letters alone while the other 255 threads
// wait. It must fail `v2::perf::share-of-v1`.
#define THREADS 256
#define SEQ_LEN 8

extern "C" __global__ void search_v2(const unsigned char *dna, int n, const unsigned char *seq, unsigned char *found)
{
    __shared__ unsigned char window[THREADS + SEQ_LEN - 1];
    int t = threadIdx.x;
    int first = blockIdx.x * THREADS;
    if (t == 0)
        for (int i = 0; i < THREADS + SEQ_LEN - 1 && first + i < n; i++)
            window[i] = dna[first + i];
    __syncthreads();

    int p = first + t;
    if (p > n - SEQ_LEN)
        return;
    unsigned char hit = 1;
    for (int k = 0; k < SEQ_LEN; k++)
        hit &= window[t + k] == seq[k];
    found[p] = hit;
}
