// Sum reductions: interleaved addressing (divergent) vs. sequential addressing,
// and warp-level primitives.
extern "C" __global__ void reduce_interleaved(const int *in, int *out, int n)
{
    extern __shared__ int sdata[];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? in[i] : 0;
    __syncthreads();
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        if (tid % (2 * s) == 0)
            sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        out[blockIdx.x] = sdata[0];
}

extern "C" __global__ void reduce_sequential(const int *in, int *out, int n)
{
    extern __shared__ int sdata[];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? in[i] : 0;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s)
            sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        out[blockIdx.x] = sdata[0];
}

extern "C" __global__ void warp_reduce(const float *in, float *out, unsigned int *ballots, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = (i < n) ? in[i] : 0.0f;
    unsigned int b = __ballot_sync(0xffffffffu, v > 0.5f);
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, off);
    int lane = threadIdx.x & 31;
    if (lane == 0) {
        out[i / 32] = v;
        ballots[i / 32] = b;
    }
}

extern "C" __global__ void warp_misc(const int *in, int *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[i];
    int k = i * 8;
    out[k + 0] = __shfl_sync(0xffffffffu, v, 3);
    out[k + 1] = __shfl_up_sync(0xffffffffu, v, 1);
    out[k + 2] = __shfl_xor_sync(0xffffffffu, v, 5);
    out[k + 3] = __all_sync(0xffffffffu, v > 0);
    out[k + 4] = __any_sync(0xffffffffu, v > 100);
    out[k + 5] = __activemask();
    out[k + 6] = __shfl_sync(0xffffffffu, v, 7, 16);
    unsigned int m = 0;
    if (v & 1)
        m = __activemask();
    out[k + 7] = m;
}

extern "C" __global__ void sync_count(const int *in, int *out)
{
    int v = in[threadIdx.x];
    int c = __syncthreads_count(v > 0);
    int a = __syncthreads_and(v > -100);
    int o = __syncthreads_or(v > 1000);
    out[threadIdx.x] = c * 100 + a * 10 + o;
}
