// ex11, part any-n, reference/slow: thread 0 of each block scans its section
// alone. The right result with the right global traffic (it passes the
// structure check), but 1023 serial steps per section: the timed check fails it.
#define SECTION_SIZE 1024

extern "C" __global__ void scan_sections(const int *in, int *out, int *sums, int n) {
    __shared__ int XY[SECTION_SIZE];
    unsigned int start = blockIdx.x * SECTION_SIZE;
    unsigned int a = start + threadIdx.x, b = a + blockDim.x;
    XY[threadIdx.x] = a < n ? in[a] : 0;
    XY[threadIdx.x + blockDim.x] = b < n ? in[b] : 0;
    __syncthreads();
    if (threadIdx.x == 0)
        for (int j = 1; j < SECTION_SIZE; ++j) XY[j] += XY[j - 1];
    __syncthreads();
    if (a < n) out[a] = XY[threadIdx.x];
    if (b < n) out[b] = XY[threadIdx.x + blockDim.x];
    if (threadIdx.x == 0) sums[blockIdx.x] = XY[SECTION_SIZE - 1];
}

extern "C" __global__ void add_sums(int *out, const int *scanned_sums, int n) {
    if (blockIdx.x == 0) return;
    int offset = scanned_sums[blockIdx.x - 1];
    unsigned int a = blockIdx.x * SECTION_SIZE + threadIdx.x, b = a + blockDim.x;
    if (a < n) out[a] += offset;
    if (b < n) out[b] += offset;
}
