// ex11 brent-kung, correct, three phases in registers and shared memory:
// thread t loads elements 2t and 2t + 1 as one int2, adds them, the block
// scans the 512 pair sums with a Brent-Kung tree, and each thread writes its
// pair back with the scan of the pairs before it.
#define SECTION_SIZE 1024
#define PAIRS (SECTION_SIZE / 2)

extern "C" __global__ void brent_kung_scan(const int *X, int *Y, int n) {
    __shared__ int P[PAIRS];
    int t = threadIdx.x;
    int base = blockIdx.x * SECTION_SIZE + 2 * t;
    int x0 = 0, x1 = 0;
    if (base + 1 < n) {
        int2 v = reinterpret_cast<const int2 *>(X)[base / 2];
        x0 = v.x;
        x1 = v.y;
    } else {
        if (base < n) x0 = X[base];
        if (base + 1 < n) x1 = X[base + 1];
    }
    P[t] = x0 + x1;
    for (int stride = 1; stride < PAIRS; stride *= 2) {
        __syncthreads();
        int i = (t + 1) * 2 * stride - 1;
        if (i < PAIRS) P[i] += P[i - stride];
    }
    for (int stride = PAIRS / 4; stride > 0; stride /= 2) {
        __syncthreads();
        int i = (t + 1) * 2 * stride - 1;
        if (i + stride < PAIRS) P[i + stride] += P[i];
    }
    __syncthreads();
    int before = t > 0 ? P[t - 1] : 0;
    if (base < n) Y[base] = before + x0;
    if (base + 1 < n) Y[base + 1] = before + x0 + x1;
}
