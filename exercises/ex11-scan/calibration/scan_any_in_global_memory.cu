// ex11 any-n, the wrong technique: scan_sections scans in global memory (the
// single-buffer Kogge-Stone on `out` itself, two barriers per step) instead of
// in shared memory. Right, but every step reads and writes the section in
// global memory again: some 30 ints of global traffic per element, not about 4.
#define SECTION_SIZE 1024

extern "C" __global__ void scan_sections(const int *in, int *out, int *sums, int n) {
    unsigned int start = blockIdx.x * SECTION_SIZE;
    unsigned int a = start + threadIdx.x, b = a + blockDim.x;
    if (a < n) out[a] = in[a];
    if (b < n) out[b] = in[b];
    for (unsigned int stride = 1; stride < SECTION_SIZE; stride *= 2) {
        __syncthreads();
        int ta = 0, tb = 0;
        if (a < n && threadIdx.x >= stride) ta = out[a] + out[a - stride];
        if (b < n) tb = out[b] + out[b - stride];
        __syncthreads();
        if (a < n && threadIdx.x >= stride) out[a] = ta;
        if (b < n) out[b] = tb;
    }
    __syncthreads();
    if (threadIdx.x == 0) sums[blockIdx.x] = out[min(start + SECTION_SIZE, (unsigned int)n) - 1];
}

extern "C" __global__ void add_sums(int *out, const int *scanned_sums, int n) {
    if (blockIdx.x == 0) return;
    int offset = scanned_sums[blockIdx.x - 1];
    unsigned int a = blockIdx.x * SECTION_SIZE + threadIdx.x, b = a + blockDim.x;
    if (a < n) out[a] += offset;
    if (b < n) out[b] += offset;
}
