// Cheat (successive timed inputs overlap), written against the timing of
// kit::timed::Windowed: the timed points are two long buffers of which each
// launch reads a window 256 bytes (64 points) further on, so a launch shares
// all but 64 of its points with the one before. At the timed size this
// kernel keeps its count and where the window started in __device__ memory,
// and a later launch counts only the points that left the window and those
// that entered it: one block reads 128 points instead of the grid reading
// 2^25, the other blocks only draw their ticket. The same window again has
// nothing that left or entered: the kept count. Any other size: the reference.
#define BIG (1 << 25) // PERF_POINTS in src/lib.rs

__device__ const float *last_x, *last_y;
__device__ unsigned int kept, total, ticket;

__device__ __forceinline__ int inside(const float *x, const float *y, long long i)
{
    return x[i] * x[i] + y[i] * y[i] <= 1.0f;
}

extern "C" __global__ void pi_shared(const float *x, const float *y, int n, unsigned int *hits)
{
    __shared__ unsigned int block_hits;
    __shared__ int change;
    __shared__ bool last;
    if (threadIdx.x == 0) {
        block_hits = 0;
        change = 0;
    }
    __syncthreads();

    long long moved = x - last_x; // points between the last window's start and this one's
    bool slide = n == BIG && last_x != 0 && moved >= 0 && moved < n && y - last_y == moved;
    unsigned int mine = 0;
    if (slide && blockIdx.x == 0) {
        int d = 0;
        for (long long k = threadIdx.x; k < moved; k += blockDim.x)
            d += inside(x, y, n - moved + k) - inside(x, y, k - moved);
        atomicAdd(&change, d);
    } else if (!slide) {
        int stride = gridDim.x * blockDim.x;
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
            mine += inside(x, y, i);
    }
    if (mine > 0)
        atomicAdd(&block_hits, mine);
    __syncthreads();
    if (n != BIG) {
        if (threadIdx.x == 0)
            atomicAdd(hits, block_hits);
        return;
    }
    // At the timed size the total is kept, and the window's start is moved on
    // once every block has read it (the Programming Guide's last-block pattern).
    if (threadIdx.x == 0) {
        if (slide && blockIdx.x == 0)
            kept += change;
        atomicAdd(&total, block_hits);
        __threadfence();
        last = atomicAdd(&ticket, 1) == gridDim.x - 1;
    }
    __syncthreads();
    if (last && threadIdx.x == 0) {
        if (!slide)
            kept = *(volatile unsigned int *)&total;
        *hits = *(volatile unsigned int *)&kept;
        total = 0;
        ticket = 0;
        last_x = x;
        last_y = y;
    }
}
