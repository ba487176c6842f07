// ex11 brent-kung, broken: no __syncthreads() between the down-sweep's steps:
// a step reads partial sums the step before is still writing. Otherwise the reference.
#define SECTION_SIZE 1024

extern "C" __global__ void brent_kung_scan(const int *X, int *Y, int n) {
    __shared__ int XY[SECTION_SIZE];
    unsigned int start = 2 * blockIdx.x * blockDim.x;
    unsigned int a = start + threadIdx.x, b = a + blockDim.x;
    // Both loads coalesced: thread t reads elements t and t + 512.
    XY[threadIdx.x] = a < n ? X[a] : 0;
    XY[threadIdx.x + blockDim.x] = b < n ? X[b] : 0;
    // Up-sweep (reduction tree): SECTION_SIZE - 1 additions.
    for (unsigned int stride = 1; stride <= blockDim.x; stride *= 2) {
        __syncthreads();
        unsigned int index = (threadIdx.x + 1) * 2 * stride - 1;
        if (index < SECTION_SIZE) XY[index] += XY[index - stride];
    }
    // Down-sweep (distribution tree): SECTION_SIZE - 1 - log2(SECTION_SIZE) more.
    __syncthreads();
    for (unsigned int stride = SECTION_SIZE / 4; stride > 0; stride /= 2) {
        unsigned int index = (threadIdx.x + 1) * stride * 2 - 1;
        if (index + stride < SECTION_SIZE) XY[index + stride] += XY[index];
    }
    __syncthreads();
    if (a < n) Y[a] = XY[threadIdx.x];
    if (b < n) Y[b] = XY[threadIdx.x + blockDim.x];
}
