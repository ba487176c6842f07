// ex11, part kogge-stone, reference/slow: the race-free single buffer of PMPP
// Fig. 11.3. Correct, but every step needs two barriers (one before the
// reads, one before the writes): 20 per section instead of the double
// buffer's 10. The structure check `one-barrier-per-step` fails it.
#define SECTION_SIZE 1024

extern "C" __global__ void kogge_stone_scan(const int *X, int *Y, int n) {
    __shared__ int XY[SECTION_SIZE];
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    XY[threadIdx.x] = i < n ? X[i] : 0;
    for (unsigned int stride = 1; stride < blockDim.x; stride *= 2) {
        __syncthreads();
        int temp = 0;
        if (threadIdx.x >= stride) temp = XY[threadIdx.x] + XY[threadIdx.x - stride];
        __syncthreads();
        if (threadIdx.x >= stride) XY[threadIdx.x] = temp;
    }
    if (i < n) Y[i] = XY[threadIdx.x];
}
