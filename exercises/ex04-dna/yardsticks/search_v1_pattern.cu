// The pattern `v2` and `v3` are timed against: the v1 search (one thread per
// start position, letters and sequence read from global memory), owned by the
// grader and timed in the same run on the same input as the student's kernel.
#define SEQ_LEN 8

extern "C" __global__ void search_v1_pattern(const unsigned char *dna, int n, const unsigned char *seq, unsigned char *found)
{
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p > n - SEQ_LEN)
        return;
    unsigned char hit = 1;
    for (int k = 0; k < SEQ_LEN; k++)
        hit &= dna[p + k] == seq[k];
    found[p] = hit;
}
