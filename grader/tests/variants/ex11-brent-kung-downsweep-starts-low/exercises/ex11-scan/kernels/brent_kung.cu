// ex11 brent-kung, broken: the down-sweep starts at SECTION_SIZE / 8 = 128
// instead of / 4, so the partial sum of the first 512 elements never reaches
// elements 768..1022. Otherwise the reference.
#define SECTION_SIZE 1024

extern "C" __global__ void brent_kung_scan(const int *X, int *Y, int n) {
    __shared__ int XY[SECTION_SIZE];
    unsigned int start = 2 * blockIdx.x * blockDim.x;
    unsigned int a = start + threadIdx.x, b = a + blockDim.x;
    XY[threadIdx.x] = a < n ? X[a] : 0;
    XY[threadIdx.x + blockDim.x] = b < n ? X[b] : 0;
    for (unsigned int stride = 1; stride <= blockDim.x; stride *= 2) {
        __syncthreads();
        unsigned int index = (threadIdx.x + 1) * 2 * stride - 1;
        if (index < SECTION_SIZE) XY[index] += XY[index - stride];
    }
    for (unsigned int stride = SECTION_SIZE / 8; stride > 0; stride /= 2) {
        __syncthreads();
        unsigned int index = (threadIdx.x + 1) * stride * 2 - 1;
        if (index + stride < SECTION_SIZE) XY[index + stride] += XY[index];
    }
    __syncthreads();
    if (a < n) Y[a] = XY[threadIdx.x];
    if (b < n) Y[b] = XY[threadIdx.x + blockDim.x];
}
