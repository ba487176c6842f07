// ex11 brent-kung, broken: the up-sweep is written with the number of active
// threads halving (`for (d = blockDim.x; d > 1; d >>= 1)`), one level short:
// XY[1023] never adds XY[511]. Otherwise a correct Brent-Kung.
#define SECTION_SIZE 1024

extern "C" __global__ void brent_kung_scan(const int *X, int *Y, int n) {
    __shared__ int XY[SECTION_SIZE];
    int t = threadIdx.x;
    int a = blockIdx.x * SECTION_SIZE + t, b = a + blockDim.x;
    XY[t] = a < n ? X[a] : 0;
    XY[t + blockDim.x] = b < n ? X[b] : 0;
    int offset = 1;
    for (int d = blockDim.x; d > 1; d >>= 1) {
        __syncthreads();
        if (t < d) {
            int hi = offset * (2 * t + 2) - 1;
            XY[hi] += XY[hi - offset];
        }
        offset *= 2;
    }
    for (int stride = SECTION_SIZE / 4; stride > 0; stride /= 2) {
        __syncthreads();
        int index = (t + 1) * stride * 2 - 1;
        if (index + stride < SECTION_SIZE) XY[index + stride] += XY[index];
    }
    __syncthreads();
    if (a < n) Y[a] = XY[t];
    if (b < n) Y[b] = XY[t + blockDim.x];
}
