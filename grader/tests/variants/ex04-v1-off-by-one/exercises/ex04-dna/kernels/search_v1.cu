// Variant: off by one. `p >= n - SEQ_LEN` skips the last start position, so
// found[n - SEQ_LEN] is never written.
#define SEQ_LEN 8
extern "C" __global__ void search_v1(const unsigned char *dna, int n, const unsigned char *seq, unsigned char *found)
{
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= n - SEQ_LEN)
        return;
    unsigned char hit = 1;
    for (int k = 0; k < SEQ_LEN; k++)
        hit &= dna[p + k] == seq[k];
    found[p] = hit;
}
