// ex11 kogge-stone, a correct variant: the double buffer as two arrays and
// two pointers swapped after each step, __restrict__ and __ldg.
#define SECTION_SIZE 1024

extern "C" __global__ void kogge_stone_scan(const int *__restrict__ X, int *__restrict__ Y, int n) {
    __shared__ int A[SECTION_SIZE];
    __shared__ int B[SECTION_SIZE];
    int *src = A, *dst = B;
    const int t = threadIdx.x;
    const int i = blockIdx.x * SECTION_SIZE + t;
    src[t] = i < n ? __ldg(&X[i]) : 0;
    __syncthreads();
    for (int stride = 1; stride < SECTION_SIZE; stride <<= 1) {
        int v = src[t];
        if (t >= stride) v += src[t - stride];
        dst[t] = v;
        __syncthreads();
        int *tmp = src;
        src = dst;
        dst = tmp;
    }
    if (i < n) Y[i] = src[t];
}
