// ex10, part `coarse`, cheat (wrong when timed): the reference's interleaved
// coarse loop, but the block's private bins are 16-bit (two to a word, half
// the shared memory and its atomics on `unsigned short` pairs). A bin
// overflows once a block counts more than 65 535 of one byte: the timed text
// does that (about 71 000 spaces a block on an H200), and before this change
// no correctness input did, so a kernel the grader itself had shown wrong
// kept its correctness points (7.5 / 10). A timed launch's wrong output now
// fails the part's correctness, naming the launch, the size and the first
// wrong bin.
#define NUM_BINS 256

extern "C" __global__ void histogram_coarse(const unsigned char *data, unsigned int n, unsigned int *bins)
{
    // Bin b is the low (b even) or high (b odd) half of word b / 2.
    __shared__ unsigned int pairs[NUM_BINS / 2];
    for (unsigned int b = threadIdx.x; b < NUM_BINS / 2; b += blockDim.x)
        pairs[b] = 0u;
    __syncthreads();

    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        unsigned int v = data[i];
        // Adds 1 to one 16-bit half; past 65 535 it carries into the other bin
        // (or out of the word), as a 16-bit counter would wrap.
        atomicAdd(&pairs[v / 2], (v & 1u) ? 0x10000u : 1u);
    }
    __syncthreads();

    for (unsigned int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) {
        unsigned int count = (pairs[b / 2] >> (16 * (b & 1u))) & 0xFFFFu;
        if (count > 0)
            atomicAdd(&bins[b], count);
    }
}
