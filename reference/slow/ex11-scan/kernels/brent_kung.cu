// ex11, part brent-kung, reference/slow: thread 0 scans the whole section
// alone. Work-efficient (1023 additions per 1024 elements: it passes the
// structure check) but serial: 1023 dependent steps while 511 threads wait.
// The timed check fails it.
#define SECTION_SIZE 1024

extern "C" __global__ void brent_kung_scan(const int *X, int *Y, int n) {
    __shared__ int XY[SECTION_SIZE];
    unsigned int start = 2 * blockIdx.x * blockDim.x;
    unsigned int a = start + threadIdx.x, b = a + blockDim.x;
    XY[threadIdx.x] = a < n ? X[a] : 0;
    XY[threadIdx.x + blockDim.x] = b < n ? X[b] : 0;
    __syncthreads();
    if (threadIdx.x == 0)
        for (int j = 1; j < SECTION_SIZE; ++j) XY[j] += XY[j - 1];
    __syncthreads();
    if (a < n) Y[a] = XY[threadIdx.x];
    if (b < n) Y[b] = XY[threadIdx.x + blockDim.x];
}
