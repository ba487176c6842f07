// ex11 brent-kung, the wrong technique: a double-buffered Kogge-Stone on the
// 1024-element section, each of the 512 threads doing two elements per step.
// Right, but n log2 n - (n - 1) additions: about 9 per element, not < 2.
#define SECTION_SIZE 1024

extern "C" __global__ void brent_kung_scan(const int *X, int *Y, int n) {
    __shared__ int buffer[2][SECTION_SIZE];
    unsigned int start = blockIdx.x * SECTION_SIZE;
    unsigned int t = threadIdx.x, u = t + blockDim.x;
    int in = 0;
    buffer[in][t] = start + t < n ? X[start + t] : 0;
    buffer[in][u] = start + u < n ? X[start + u] : 0;
    for (unsigned int stride = 1; stride < SECTION_SIZE; stride *= 2) {
        __syncthreads();
        int out = 1 - in;
        buffer[out][t] = t >= stride ? buffer[in][t] + buffer[in][t - stride] : buffer[in][t];
        buffer[out][u] = u >= stride ? buffer[in][u] + buffer[in][u - stride] : buffer[in][u];
        in = out;
    }
    if (start + t < n) Y[start + t] = buffer[in][t];
    if (start + u < n) Y[start + u] = buffer[in][u];
}
