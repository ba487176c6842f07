// ex11 kogge-stone, broken: no bounds check on the store, so the last,
// partial section writes past the end of Y. Otherwise the reference.
#define SECTION_SIZE 1024

extern "C" __global__ void kogge_stone_scan(const int *X, int *Y, int n) {
    // Two buffers: step k reads one and writes the other, so no thread ever
    // overwrites a value another thread of the same step still has to read.
    __shared__ int buffer[2][SECTION_SIZE];
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    int in = 0;
    buffer[in][threadIdx.x] = i < n ? X[i] : 0;
    for (unsigned int stride = 1; stride < blockDim.x; stride *= 2) {
        // One barrier per step: the values of the step before are all written
        // (and nobody still reads the buffer this step writes: that was two steps ago).
        __syncthreads();
        int out = 1 - in;
        if (threadIdx.x >= stride)
            buffer[out][threadIdx.x] = buffer[in][threadIdx.x] + buffer[in][threadIdx.x - stride];
        else
            buffer[out][threadIdx.x] = buffer[in][threadIdx.x];
        in = out;
    }
    Y[i] = buffer[in][threadIdx.x];
}
