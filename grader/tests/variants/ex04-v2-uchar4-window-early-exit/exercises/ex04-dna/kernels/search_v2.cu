// Variant (correct): the window staged as `uchar4` words, 66 threads loading
// four letters each (fewer, wider requests than a letter per thread), and the
// comparison stopping at the first mismatch. Each idea alone keeps every
// point; together the warps' loads have fewer active lanes (the early exit
// thins the loads of `seq`, the words thin the copy), which a count of lanes
// read as "a few threads copy the window": its loads move more bytes per
// request than the reference's.
#define THREADS 256
#define SEQ_LEN 8
#define WINDOW (THREADS + SEQ_LEN - 1)
#define WORDS ((WINDOW + 3) / 4)

extern "C" __global__ void search_v2(const unsigned char *dna, int n, const unsigned char *seq, unsigned char *found)
{
    __shared__ uchar4 window4[WORDS];
    const unsigned char *window = reinterpret_cast<const unsigned char *>(window4);
    int t = threadIdx.x;
    int first = blockIdx.x * THREADS;

    // A word where its four letters are in the string (the block's first
    // letter is a multiple of 4 from the start), letter by letter at its end.
    if (t < WORDS) {
        int i = first + 4 * t;
        if (i + 3 < n) {
            window4[t] = reinterpret_cast<const uchar4 *>(dna + first)[t];
        } else {
            unsigned char *w = reinterpret_cast<unsigned char *>(window4) + 4 * t;
            for (int k = 0; k < 4 && i + k < n; k++)
                w[k] = dna[i + k];
        }
    }
    __syncthreads();

    int p = first + t;
    if (p > n - SEQ_LEN)
        return;
    unsigned char hit = 1;
    for (int k = 0; k < SEQ_LEN; k++) {
        if (window[t + k] != seq[k]) {
            hit = 0;
            break;
        }
    }
    found[p] = hit;
}
