// ex11 brent-kung, slow (a real mistake): thread 0 of each block walks its
// section in global memory, a running sum from X to Y. Correct, one load and
// one store per element, one addition per element (work-efficient), and serial:
// 1024 dependent steps while 511 threads idle.
#define SECTION_SIZE 1024

extern "C" __global__ void brent_kung_scan(const int *X, int *Y, int n) {
    if (threadIdx.x != 0) return;
    int start = blockIdx.x * SECTION_SIZE;
    int end = min(start + SECTION_SIZE, n);
    int sum = 0;
    for (int i = start; i < end; ++i) {
        sum += X[i];
        Y[i] = sum;
    }
}
