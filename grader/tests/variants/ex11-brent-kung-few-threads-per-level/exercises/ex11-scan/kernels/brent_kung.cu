// ex11 brent-kung, a correct variant: the textbook tree with the other thread
// mapping (the first SECTION_SIZE / (2 * stride) threads work at each level,
// so whole warps idle together), unrolled loops, and a shifted index.
#define SECTION_SIZE 1024

extern "C" __global__ void brent_kung_scan(const int *__restrict__ X, int *__restrict__ Y, int n) {
    __shared__ int XY[SECTION_SIZE];
    const unsigned int t = threadIdx.x;
    const unsigned int base = blockIdx.x * SECTION_SIZE;
#pragma unroll
    for (unsigned int k = 0; k < 2; ++k) {
        unsigned int j = t + k * (SECTION_SIZE / 2);
        XY[j] = base + j < n ? __ldg(X + base + j) : 0;
    }
#pragma unroll
    for (unsigned int stride = 1; stride < SECTION_SIZE; stride <<= 1) {
        __syncthreads();
        if (t < SECTION_SIZE / (2 * stride)) {
            unsigned int index = ((t + 1) * stride << 1) - 1;
            XY[index] += XY[index - stride];
        }
    }
#pragma unroll
    for (unsigned int stride = SECTION_SIZE >> 2; stride > 0; stride >>= 1) {
        __syncthreads();
        unsigned int index = ((t + 1) * stride << 1) - 1;
        if (index + stride < SECTION_SIZE) XY[index + stride] += XY[index];
    }
    __syncthreads();
#pragma unroll
    for (unsigned int k = 0; k < 2; ++k) {
        unsigned int j = t + k * (SECTION_SIZE / 2);
        if (base + j < n) Y[base + j] = XY[j];
    }
}
