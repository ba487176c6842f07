// ex04, part v2: the announced measured band (issue 46, family 3).
// CALIBRATION.md named the strings the measured checks and the stand-in of
// `share-of-v1` run on (12 to 20 blocks of start positions): there every
// thread copies its own letter of the window, as the lesson asks; on every
// other string thread 0 copies the whole window alone while the other 255
// threads wait. Right on every string. The measured checks now run on three
// lengths drawn by the run's secret across the whole simulated range (2 to 64
// blocks), each of which must pass: the shortest is always under 12 blocks.
#define THREADS 256
#define SEQ_LEN 8

extern "C" __global__ void search_v2(const unsigned char *dna, int n, const unsigned char *seq, unsigned char *found)
{
    __shared__ unsigned char window[THREADS + SEQ_LEN - 1];
    int t = threadIdx.x;
    int first = blockIdx.x * THREADS;

    if (gridDim.x >= 12 && gridDim.x <= 20) {
        if (first + t < n)
            window[t] = dna[first + t];
        if (t < SEQ_LEN - 1 && first + THREADS + t < n)
            window[THREADS + t] = dna[first + THREADS + t];
    } else if (t == 0) {
        for (int i = 0; i < THREADS + SEQ_LEN - 1 && first + i < n; i++)
            window[i] = dna[first + i];
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
