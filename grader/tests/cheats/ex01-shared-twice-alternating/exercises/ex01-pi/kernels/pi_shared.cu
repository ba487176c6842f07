// ex01 `shared`, cheat (jitter): counts in a register, a shared counter and
// one global atomicAdd per block, as the reference does, but reads every
// point and computes every distance twice (two passes over x and y: too slow
// for the timed check), and at the timed size every other launch is slow (a
// counter in `__device__` memory makes block 0 spin). Its samples spread far
// beyond 10 %: under the old rule the check left the maximum (7.5 / 7.5).
// Now a grader kernel timed in the same rounds stays steady, and the kernel
// is graded by its slow launches.
#define TIMED_MIN (4 << 20) // above every correctness size: the simulator never spins

__device__ unsigned jitter_launches;

__device__ void jitter(int n)
{
    if (n < TIMED_MIN || blockIdx.x != 0 || threadIdx.x != 0)
        return;
    if (atomicAdd(&jitter_launches, 1u) % 2 == 0)
        return;
    long long t0 = clock64();
    while (clock64() - t0 < 40000000LL) {
    }
}

extern "C" __global__ void pi_shared(const float *x, const float *y, int n, unsigned int *hits)
{
    __shared__ unsigned int block_hits;
    if (threadIdx.x == 0)
        block_hits = 0;
    jitter(n);
    __syncthreads();

    unsigned int first = 0, second = 0;
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        if (x[i] * x[i] + y[i] * y[i] <= 1.0f)
            first++;
    // The same distances once more, loaded again (past L1).
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float px = __ldcg(&x[i]), py = __ldcg(&y[i]);
        if (px * px + py * py <= 1.0f)
            second++;
    }
    unsigned int mine = (first + second) / 2;
    if (mine > 0)
        atomicAdd(&block_hits, mine);
    __syncthreads();

    if (threadIdx.x == 0)
        atomicAdd(hits, block_hits);
}
