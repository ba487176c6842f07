// A search that misses the last start position, beside a helper kernel that
// counts pairs of letters in 16-bit halves (short2, add.s16x2 with clang): the
// file must be graded (wrong), not left "not graded here".
#define THREADS 256
#define SEQ_LEN 8

extern "C" __global__ void search_v1(const unsigned char *dna, int n, const unsigned char *seq, unsigned char *found)
{
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= n - SEQ_LEN) // misses the last start position
        return;
    unsigned char hit = 1;
    for (int k = 0; k < SEQ_LEN; k++)
        hit &= dna[p + k] == seq[k];
    found[p] = hit;
}

// Sums of (first, second) letter codes over pairs, per thread: unused by the grader.
extern "C" __global__ void pair_sums(const short2 *pairs, int n, short2 *sums)
{
    short2 acc = make_short2(0, 0);
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        short2 v = pairs[i];
        acc.x += v.x;
        acc.y += v.y;
    }
    sums[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
