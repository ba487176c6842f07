// Variant (correct): stops at the first mismatching letter (divergent, but
// right), __restrict__ pointers.
#define SEQ_LEN 8
extern "C" __global__ void search_v1(const unsigned char *__restrict__ dna, int n,
                                     const unsigned char *__restrict__ seq, unsigned char *__restrict__ found)
{
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p + SEQ_LEN > n)
        return;
    int k = 0;
    while (k < SEQ_LEN && dna[p + k] == seq[k])
        k++;
    found[p] = k == SEQ_LEN;
}
