// ex11 any-n, slow (a real mistake): scan_sections is the reference, but in
// add_sums thread 0 of each block adds the offset to the whole section in a
// loop while 511 threads return. Correct, the same traffic, serial.
#define SECTION_SIZE 1024

// Brent-Kung, as in the brent-kung part, and each section's total to sums.
extern "C" __global__ void scan_sections(const int *in, int *out, int *sums, int n) {
    __shared__ int XY[SECTION_SIZE];
    unsigned int start = blockIdx.x * SECTION_SIZE;
    unsigned int a = start + threadIdx.x, b = a + blockDim.x;
    XY[threadIdx.x] = a < n ? in[a] : 0;
    XY[threadIdx.x + blockDim.x] = b < n ? in[b] : 0;
    for (unsigned int stride = 1; stride <= blockDim.x; stride *= 2) {
        __syncthreads();
        unsigned int index = (threadIdx.x + 1) * 2 * stride - 1;
        if (index < SECTION_SIZE) XY[index] += XY[index - stride];
    }
    for (unsigned int stride = SECTION_SIZE / 4; stride > 0; stride /= 2) {
        __syncthreads();
        unsigned int index = (threadIdx.x + 1) * stride * 2 - 1;
        if (index + stride < SECTION_SIZE) XY[index + stride] += XY[index];
    }
    __syncthreads();
    if (a < n) out[a] = XY[threadIdx.x];
    if (b < n) out[b] = XY[threadIdx.x + blockDim.x];
    // The padding past n is 0, so the last element is the section's total.
    if (threadIdx.x == 0) sums[blockIdx.x] = XY[SECTION_SIZE - 1];
}

extern "C" __global__ void add_sums(int *out, const int *scanned_sums, int n) {
    if (blockIdx.x == 0 || threadIdx.x != 0) return;
    int offset = scanned_sums[blockIdx.x - 1];
    int start = blockIdx.x * SECTION_SIZE;
    int end = min(start + SECTION_SIZE, n);
    for (int i = start; i < end; ++i) out[i] += offset;
}
