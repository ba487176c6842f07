// ex11 kogge-stone, broken: one buffer and one barrier per step. Thread t
// writes XY[t] while thread t + stride may still read it in the same step: a
// race, which a GPU may or may not show.
#define SECTION_SIZE 1024

extern "C" __global__ void kogge_stone_scan(const int *X, int *Y, int n) {
    __shared__ int XY[SECTION_SIZE];
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    XY[threadIdx.x] = i < n ? X[i] : 0;
    for (unsigned int stride = 1; stride < blockDim.x; stride *= 2) {
        __syncthreads();
        if (threadIdx.x >= stride) XY[threadIdx.x] += XY[threadIdx.x - stride];
    }
    if (i < n) Y[i] = XY[threadIdx.x];
}
