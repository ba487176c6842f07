// The reference search, and beside it a helper kernel of the student's that
// counts pairs of letters in 16-bit halves (short2): clang compiles its adds
// to add.s16x2, which the simulator must run for the file to be graded.
#define THREADS 256
#define SEQ_LEN 8

extern "C" __global__ void search_v1(const unsigned char *dna, int n, const unsigned char *seq, unsigned char *found)
{
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p > n - SEQ_LEN)
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
