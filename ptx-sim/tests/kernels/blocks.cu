// Kernels for the detectors of races between blocks on global memory and of
// accesses outside a __shared__ variable (tests/blocks.rs).

// Each block counts its positive elements in shared memory, then publishes
// the count with a plain read-modify-write (`atomic` = 0) or an atomicAdd.
extern "C" __global__ void block_count(const int *in, int n, unsigned int *hits, int atomic)
{
    __shared__ unsigned int local;
    if (threadIdx.x == 0)
        local = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && in[i] > 0)
        atomicAdd(&local, 1u);
    __syncthreads();
    if (threadIdx.x == 0) {
        if (atomic)
            atomicAdd(hits, local);
        else
            *hits += local;
    }
}

__device__ unsigned int tickets = 0;
__device__ int total = 0;

// The Programming Guide's threadfence reduction: each block writes its partial
// sum, fences (`fence` = 1), takes a ticket; the block that draws the last
// ticket adds every partial. With `fence` = 0 the partials are not ordered.
extern "C" __global__ void fenced_sum(const int *in, int n, int *partial, int fence)
{
    __shared__ int sums[64];
    __shared__ bool last;
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    sums[t] = i < n ? in[i] : 0;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s)
            sums[t] += sums[t + s];
        __syncthreads();
    }
    if (t == 0) {
        partial[blockIdx.x] = sums[0];
        if (fence)
            __threadfence();
        unsigned int ticket = atomicInc(&tickets, gridDim.x);
        last = ticket == gridDim.x - 1;
    }
    __syncthreads();
    if (last && t == 0) {
        int sum = 0;
        for (int b = 0; b < gridDim.x; b++)
            sum += partial[b];
        total = sum;
        tickets = 0;
    }
}

// Reads its neighbour block's element: a race only if `inplace` makes the
// neighbour write it.
extern "C" __global__ void shift(const int *in, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i + 1 < n)
        out[i] = in[i + 1];
}

// A tile of `size` ints filled by `blockDim.x` threads, read back reversed:
// size == blockDim.x is exact, size == blockDim.x - 1 is one short.
#define TILE_SHORT 63
extern "C" __global__ void tile_short(const int *in, int *out)
{
    __shared__ int tile[TILE_SHORT];
    int t = threadIdx.x;
    tile[t] = in[t];
    __syncthreads();
    out[t] = tile[blockDim.x - 1 - t];
}

extern "C" __global__ void tile_exact(const int *in, int *out)
{
    __shared__ int tile[64];
    int t = threadIdx.x;
    tile[t] = in[t];
    __syncthreads();
    out[t] = tile[blockDim.x - 1 - t];
}

// One extern array carved into an int array and a float array by pointer
// arithmetic (the launch gives 2 * blockDim.x * 4 bytes; less is too little).
extern "C" __global__ void carved(const int *in, float *out)
{
    extern __shared__ int smem[];
    int *a = smem;
    float *b = (float *)(smem + blockDim.x);
    int t = threadIdx.x;
    a[t] = in[t];
    b[t] = 0.5f * in[t];
    __syncthreads();
    out[t] = a[blockDim.x - 1 - t] + b[t];
}

// A histogram's merge of each block's count into one bin: `mode` 0 reads the
// bin and exchanges in the sum (two steps: blocks lose each other's counts on
// a GPU), 1 is the compare-and-swap loop (each step checked by the CAS), 2
// polls the bin with a volatile load before adding (a strong load: no data race).
extern "C" __global__ void bin_merge(const int *in, int n, int *bin, int mode)
{
    __shared__ int count;
    if (threadIdx.x == 0)
        count = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && in[i] > 0)
        atomicAdd(&count, 1);
    __syncthreads();
    if (threadIdx.x != 0)
        return;
    if (mode == 0) {
        atomicExch(bin, *bin + count);
    } else if (mode == 1) {
        int old = *bin, assumed;
        do {
            assumed = old;
            old = atomicCAS(bin, assumed, assumed + count);
        } while (old != assumed);
    } else if (*(volatile int *)bin >= 0) {
        atomicAdd(bin, count);
    }
}
