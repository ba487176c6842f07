// Cheat (successive timed inputs overlap), written against the timing of
// kit::timed::Windowed: each timed launch reads a window of one long buffer
// 256 bytes (64 ints) further on than the launch before, so each block's 256
// ints are the last launch's with 64 gone at the front and 64 new at the
// back. At the timed size the kernel keeps every block's sum and where the
// window started in __device__ memory, and a later launch that moved by up
// to 64 ints reads only what left and what entered each block: half the
// input. The same window again has nothing that left or entered: the kept
// sums. Any other size: the reference.
#define THREADS 256
#define BIG (1 << 26) // PERF_N in src/lib.rs
#define STEP 64       // ints between two timed windows

__device__ int kept[BIG / THREADS];
__device__ const int *last_in;
__device__ unsigned int ticket;

extern "C" __global__ void reduce_sequential(const int *in, int n, int *partial)
{
    __shared__ int partialSum[THREADS];
    __shared__ bool last;
    unsigned int t = threadIdx.x;
    long long base = (long long)blockIdx.x * THREADS;
    long long moved = in - last_in; // ints between the last window's start and this one's
    bool slide = n == BIG && last_in != 0 && moved >= 0 && moved <= STEP;
    if (slide) {
        int d = (int)moved;
        partialSum[t] = t < d ? in[base + THREADS - d + t] - in[base - d + t] : 0;
    } else {
        unsigned int i = blockIdx.x * blockDim.x + t;
        partialSum[t] = i < (unsigned int)n ? in[i] : 0;
    }
    for (unsigned int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        __syncthreads();
        if (t < stride)
            partialSum[t] += partialSum[t + stride];
    }
    if (t == 0) {
        int sum = slide ? kept[blockIdx.x] + partialSum[0] : partialSum[0];
        partial[blockIdx.x] = sum;
        if (n == BIG) {
            kept[blockIdx.x] = sum;
            // The window's start moves on once every block has read it.
            __threadfence();
            last = atomicAdd(&ticket, 1) == gridDim.x - 1;
        }
    }
    if (n == BIG) {
        __syncthreads();
        if (t == 0 && last) {
            last_in = in;
            ticket = 0;
        }
    }
}
