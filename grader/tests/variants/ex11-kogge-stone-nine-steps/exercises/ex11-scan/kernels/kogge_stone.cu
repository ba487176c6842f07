// ex11 kogge-stone, broken: the steps counted as `for (int k = 0; k < 9; k++)`
// (log2(1024) is 10), with a pointer swap. The last step (stride 512) is missing.
#define SECTION_SIZE 1024

extern "C" __global__ void kogge_stone_scan(const int *X, int *Y, int n) {
    __shared__ int a[SECTION_SIZE], b[SECTION_SIZE];
    int *src = a, *dst = b;
    int t = threadIdx.x;
    int i = blockIdx.x * SECTION_SIZE + t;
    src[t] = i < n ? X[i] : 0;
    for (int k = 0; k < 9; k++) {
        int stride = 1 << k;
        __syncthreads();
        int v = src[t];
        if (t >= stride) v += src[t - stride];
        dst[t] = v;
        int *tmp = src; src = dst; dst = tmp;
    }
    if (i < n) Y[i] = src[t];
}
