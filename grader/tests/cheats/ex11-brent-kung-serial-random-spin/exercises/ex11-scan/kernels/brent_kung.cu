// ex11, part brent-kung, cheat (jitter): the serial section of
// reference/slow (thread 0 scans the whole section alone: too slow for the
// timed check), and at the timed size a random spin in one block, so that the
// timed launches spread by far more than 10 %. Under the old rule a spread
// that large meant "another process is using this GPU", and the check left
// the maximum: 7.5 / 7.5. Now a grader kernel is timed beside it in the same
// rounds; it stays steady, so the spread is the kernel's own and it is graded
// by its slow launches (docs/hostile.md, "Every outcome a kernel can cause").
#define SECTION_SIZE 1024
#define TIMED_MIN (4 << 20) // above every correctness size: the simulator never spins

__device__ unsigned jitter_launches;

// Thread 0 of block 0 spins 0, 20, 40 or 60 million cycles (0-30 ms on an
// H200), drawn from a counter in `__device__` memory.
__device__ void jitter(int n)
{
    if (n < TIMED_MIN || blockIdx.x != 0 || threadIdx.x != 0)
        return;
    unsigned h = atomicAdd(&jitter_launches, 1u) * 2654435761u;
    h ^= h >> 15;
    long long spin = (long long)(h % 4) * 20000000LL, t0 = clock64();
    while (clock64() - t0 < spin) {
    }
}

extern "C" __global__ void brent_kung_scan(const int *X, int *Y, int n) {
    __shared__ int XY[SECTION_SIZE];
    jitter(n);
    unsigned int start = 2 * blockIdx.x * blockDim.x;
    unsigned int a = start + threadIdx.x, b = a + blockDim.x;
    XY[threadIdx.x] = a < n ? X[a] : 0;
    XY[threadIdx.x + blockDim.x] = b < n ? X[b] : 0;
    __syncthreads();
    if (threadIdx.x == 0)
        for (int j = 1; j < SECTION_SIZE; ++j) XY[j] += XY[j - 1];
    __syncthreads();
    if (a < n) Y[a] = XY[threadIdx.x];
    if (b < n) Y[b] = XY[threadIdx.x + blockDim.x];
}
