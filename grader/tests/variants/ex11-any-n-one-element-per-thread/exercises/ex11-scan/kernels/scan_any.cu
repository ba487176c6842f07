// ex11 any-n, broken: both kernels are written for one element per thread
// (i = blockIdx.x * blockDim.x + threadIdx.x), a Kogge-Stone of blockDim.x
// elements, where the launch gives 512 threads per section of 1024: half of
// every section is never scanned, and the offsets land on the wrong elements.
extern "C" __global__ void scan_sections(const int *in, int *out, int *sums, int n) {
    __shared__ int buf[2][512];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    int cur = 0;
    buf[cur][t] = i < n ? in[i] : 0;
    for (int stride = 1; stride < blockDim.x; stride *= 2) {
        __syncthreads();
        buf[1 - cur][t] = t >= stride ? buf[cur][t] + buf[cur][t - stride] : buf[cur][t];
        cur = 1 - cur;
    }
    if (i < n) out[i] = buf[cur][t];
    if (t == blockDim.x - 1) sums[blockIdx.x] = buf[cur][t];
}

extern "C" __global__ void add_sums(int *out, const int *scanned_sums, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (blockIdx.x > 0 && i < n) out[i] += scanned_sums[blockIdx.x - 1];
}
