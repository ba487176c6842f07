// Section scans of 256 ints (PMPP chapter 11): Kogge-Stone does n log n
// additions, Brent-Kung about 2n; both add indices too, which are not work.
#define SECTION 256

extern "C" __global__ void kogge_stone(const int *in, int *out, int n)
{
    __shared__ int a[SECTION], b[SECTION];
    int i = blockIdx.x * SECTION + threadIdx.x;
    a[threadIdx.x] = i < n ? in[i] : 0;
    int *src = a, *dst = b;
    for (int stride = 1; stride < SECTION; stride *= 2) {
        __syncthreads();
        int v = src[threadIdx.x];
        if (threadIdx.x >= stride)
            v += src[threadIdx.x - stride];
        dst[threadIdx.x] = v;
        int *t = src;
        src = dst;
        dst = t;
    }
    if (i < n)
        out[i] = src[threadIdx.x];
}

extern "C" __global__ void brent_kung(const int *in, int *out, int n)
{
    __shared__ int x[SECTION];
    int base = blockIdx.x * SECTION;
    for (int j = threadIdx.x; j < SECTION; j += blockDim.x)
        x[j] = base + j < n ? in[base + j] : 0;
    for (int stride = 1; stride < SECTION; stride *= 2) {
        __syncthreads();
        int k = (threadIdx.x + 1) * 2 * stride - 1;
        if (k < SECTION)
            x[k] += x[k - stride];
    }
    for (int stride = SECTION / 4; stride > 0; stride /= 2) {
        __syncthreads();
        int k = (threadIdx.x + 1) * 2 * stride - 1;
        if (k + stride < SECTION)
            x[k + stride] += x[k];
    }
    __syncthreads();
    for (int j = threadIdx.x; j < SECTION; j += blockDim.x)
        if (base + j < n)
            out[base + j] = x[j];
}
