// ex11 kogge-stone, broken: the loop stops one step early (`stride < blockDim.x / 2`),
// so the step of stride 512 never runs: element 512 and later hold only the
// 512 elements ending at them. Otherwise the reference.
#define SECTION_SIZE 1024

extern "C" __global__ void kogge_stone_scan(const int *X, int *Y, int n) {
    __shared__ int buffer[2][SECTION_SIZE];
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    int in = 0;
    buffer[in][threadIdx.x] = i < n ? X[i] : 0;
    for (unsigned int stride = 1; stride < blockDim.x / 2; stride *= 2) {
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
