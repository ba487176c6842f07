// Monte Carlo pi counting: one global atomic per hit vs. a per-block shared counter.
extern "C" __global__ void count_global(const float *x, const float *y, int n, unsigned int *hits)
{
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        if (x[i] * x[i] + y[i] * y[i] <= 1.0f)
            atomicAdd(hits, 1u);
    }
}

extern "C" __global__ void count_shared(const float *x, const float *y, int n, unsigned int *hits)
{
    __shared__ unsigned int block_hits;
    if (threadIdx.x == 0)
        block_hits = 0;
    __syncthreads();
    unsigned int mine = 0;
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        if (x[i] * x[i] + y[i] * y[i] <= 1.0f)
            mine++;
    }
    if (mine > 0)
        atomicAdd(&block_hits, mine);
    __syncthreads();
    if (threadIdx.x == 0)
        atomicAdd(hits, block_hits);
}

extern "C" __global__ void atomic_mix(int *ints, unsigned int *uints, float *f, double *d)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    atomicMax(&ints[0], t);
    atomicMin(&ints[1], -t);
    atomicAnd(&ints[2], ~(1 << (t % 31)));
    atomicOr(&ints[3], 1 << (t % 31));
    atomicXor(&ints[4], t);
    atomicSub(&ints[5], 2);
    atomicInc(&uints[0], 9u);
    atomicDec(&uints[1], 9u);
    atomicCAS(&ints[6], t - 1, t);
    atomicExch(&uints[2], 7u);
    atomicAdd(&f[0], 0.5f);
    atomicAdd(&d[0], 0.25);
    unsigned long long *u64 = (unsigned long long *)&d[1];
    atomicAdd(u64, 3ull);
}

// Histograms of bytes into 256 bins: one global atomic per byte, and a
// privatized copy per block merged once per bin.
extern "C" __global__ void histogram_global(const unsigned char *data, int n, unsigned int *bins)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&bins[data[i]], 1u);
}

extern "C" __global__ void histogram_private(const unsigned char *data, int n, unsigned int *bins)
{
    __shared__ unsigned int local[256];
    for (int b = threadIdx.x; b < 256; b += blockDim.x)
        local[b] = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&local[data[i]], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += blockDim.x)
        if (local[b] > 0)
            atomicAdd(&bins[b], local[b]);
}
