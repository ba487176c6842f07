// ex05 `stencil`, cheat (jitter): stages the block's window and halos in
// shared memory and computes from it after a barrier (the structure check
// passes), but only the block's first warp loads the window, 32 lanes for 518
// elements, while the other warps wait (too slow for the timed check); at the
// timed size block 0 also spins a random time on every launch, so that the
// timed samples spread far beyond 10 %. Under the old rule the check left the
// maximum (7.5 / 7.5); now a grader kernel timed in the same rounds stays
// steady, and the kernel is graded by its slow launches.
#define BLOCK_SIZE 512
#define RADIUS 3
#define TIMED_MIN (4 << 20) // above every correctness size: the simulator never spins

__device__ unsigned jitter_launches;

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

extern "C" __global__ void stencil_1d(const int *in, int *out, int n)
{
    __shared__ int tmp[BLOCK_SIZE + 2 * RADIUS];
    int base = blockIdx.x * BLOCK_SIZE;
    int padded = n + 2 * RADIUS;
    int t = threadIdx.x;

    jitter(n);
    if (t < 32)
        for (int j = t; j < BLOCK_SIZE + 2 * RADIUS && base + j < padded; j += 32)
            tmp[j] = in[base + j];
    __syncthreads();

    int i = base + t;
    if (i < n) {
        int sum = 0;
        for (int k = 0; k <= 2 * RADIUS; k++)
            sum += tmp[t + k];
        out[i] = sum / (2 * RADIUS + 1);
    }
}
