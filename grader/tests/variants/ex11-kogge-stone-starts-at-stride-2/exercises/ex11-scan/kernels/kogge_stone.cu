// ex11 kogge-stone, broken: the loop starts at stride 2, so the step of
// stride 1 never runs. No single element or prefix explains the wrong sums:
// the message must not name a distance it cannot prove.
#define SECTION_SIZE 1024

extern "C" __global__ void kogge_stone_scan(const int *X, int *Y, int n) {
    __shared__ int buffer[2][SECTION_SIZE];
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    int in = 0;
    buffer[in][threadIdx.x] = i < n ? X[i] : 0;
    for (unsigned int stride = 2; stride < blockDim.x; stride *= 2) {
        __syncthreads();
        int out = 1 - in;
        if (threadIdx.x >= stride)
            buffer[out][threadIdx.x] = buffer[in][threadIdx.x] + buffer[in][threadIdx.x - stride];
        else
            buffer[out][threadIdx.x] = buffer[in][threadIdx.x];
        in = out;
    }
    if (i < n) Y[i] = buffer[in][threadIdx.x];
}
