// Kernels for the sanitizer rules (tests/sanitizer.rs): racecheck's races and a
// plain read against an atomic, uninitialised shared reads, guard zones.

// The Programming Guide's atomicCAS loop on shared memory: a plain read, then
// atomicCAS until it sticks. Correct: no race.
extern "C" __global__ void cas_max(const int *in, int *out)
{
    __shared__ int best;
    if (threadIdx.x == 0)
        best = -1;
    __syncthreads();
    int v = in[blockIdx.x * blockDim.x + threadIdx.x];
    int old = best;
    while (old < v) {
        int assumed = old;
        old = atomicCAS(&best, assumed, v);
        if (old == assumed)
            break;
    }
    __syncthreads();
    if (threadIdx.x == 0)
        out[blockIdx.x] = best;
}

// A counter cleared by one thread with no barrier before the others add to it:
// passes on a GPU by luck; a race (plain write vs atomic).
extern "C" __global__ void counter(const int *in, int *out, int with_barrier)
{
    __shared__ int count;
    if (threadIdx.x == 0)
        count = 0;
    if (with_barrier)
        __syncthreads();
    if (in[threadIdx.x] > 0)
        atomicAdd(&count, 1);
    __syncthreads();
    if (threadIdx.x == 0)
        out[blockIdx.x] = count;
}

// Every thread stores the same value into the same slot: racecheck's harmless
// same-value write. `distinct` makes the values differ: a real race.
extern "C" __global__ void same_value(int *out, int distinct)
{
    __shared__ int flag;
    flag = distinct ? threadIdx.x : 7;
    __syncthreads();
    out[threadIdx.x] = flag;
}

// Only the first half of the tile is loaded, but every thread reads its slot.
extern "C" __global__ void half_loaded(const int *in, int *out, int n_loaded)
{
    __shared__ int tile[64];
    if (threadIdx.x < n_loaded)
        tile[threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = tile[threadIdx.x];
}

// A 3-point stencil whose halo loads are not guarded: reads in[-1] and in[n].
extern "C" __global__ void stencil3(const float *in, float *out, int n, int guarded)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float l = (!guarded || i > 0) ? in[i - 1] : 0.0f;
    float r = (!guarded || i + 1 < n) ? in[i + 1] : 0.0f;
    out[i] = l + in[i] + r;
}

// Writes one element past the end when `past` is set.
extern "C" __global__ void fill(int *out, int n, int past)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n + past)
        out[i] = i;
}

// A privatized histogram: shared bins counted with atomics, then merged by one
// thread per bin. Without the barrier between counting and merging, a warp
// merges bins the other warps still count into: a plain read racing other
// threads' atomics (in either order).
extern "C" __global__ void private_bins(const int *in, int *bins, int with_barrier)
{
    __shared__ int bins_s[8];
    if (threadIdx.x < 8)
        bins_s[threadIdx.x] = 0;
    __syncthreads();
    atomicAdd(&bins_s[in[blockIdx.x * blockDim.x + threadIdx.x] & 7], 1);
    if (with_barrier)
        __syncthreads();
    if (threadIdx.x < 8)
        atomicAdd(&bins[threadIdx.x], bins_s[threadIdx.x]);
}
