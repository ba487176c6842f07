// ex04, part `v1`: is an 8-letter sequence in a DNA string? Global memory only.
//
// dna holds n letters ('A', 'C', 'G', 'T'), seq the 8 letters to look for.
// A start position p is any index where the whole sequence fits:
// 0 <= p <= n - SEQ_LEN (16377 positions for the seed's 16384 letters).
// For every start position write found[p] = 1 if dna[p..p+8) equals seq, else 0.
// (The seed's Contient() is then true when any found[p] is 1; the grader checks
// every position, so a lucky guess cannot pass.)
//
// The launch: one thread per start position, blocks of THREADS = 256 threads,
// ceil((n - SEQ_LEN + 1) / 256) blocks. n >= SEQ_LEN, and n - SEQ_LEN + 1 is
// usually not a multiple of 256: threads past the last position must write
// nothing (found has exactly n - SEQ_LEN + 1 elements).
//
// Keep the `extern "C"` and the name and parameters exactly as they are: the
// grader looks the kernel up by name.
#define THREADS 256
#define SEQ_LEN 8

extern "C" __global__ void search_v1(const unsigned char *dna, int n, const unsigned char *seq, unsigned char *found)
{
    // TODO 1: compute this thread's start position p from blockIdx.x,
    //         blockDim.x and threadIdx.x.
    // TODO 2: if p is past the last start position (p > n - SEQ_LEN), do nothing.
    // TODO 3: compare dna[p + k] with seq[k] for k = 0 .. SEQ_LEN-1, reading both
    //         straight from global memory.
    // TODO 4: write found[p] = 1 when all SEQ_LEN letters are equal, 0 otherwise.
}
