// ex11 brent-kung, a correct variant, thread-coarsened: each thread loads two
// consecutive elements (one int2 where both exist) and adds them in
// registers, a Brent-Kung scan of the 512 pair sums in shared memory, then
// each thread writes its pair from its scanned sum. About 2 additions per element.
#define SECTION_SIZE 1024
#define PAIRS (SECTION_SIZE / 2)

extern "C" __global__ void brent_kung_scan(const int *__restrict__ X, int *__restrict__ Y, int n) {
    __shared__ int S[PAIRS];
    const int t = threadIdx.x;
    const int i = blockIdx.x * SECTION_SIZE + 2 * t;
    int x0 = 0, x1 = 0;
    if (i + 1 < n) {
        int2 v = *reinterpret_cast<const int2 *>(X + i);
        x0 = v.x;
        x1 = v.y;
    } else if (i < n) {
        x0 = X[i];
    }
    S[t] = x0 + x1;
    for (int stride = 1; stride < PAIRS; stride *= 2) {
        __syncthreads();
        int index = (t + 1) * 2 * stride - 1;
        if (index < PAIRS) S[index] += S[index - stride];
    }
    for (int stride = PAIRS / 4; stride > 0; stride /= 2) {
        __syncthreads();
        int index = (t + 1) * 2 * stride - 1;
        if (index + stride < PAIRS) S[index + stride] += S[index];
    }
    __syncthreads();
    int inclusive = S[t];
    if (i + 1 < n) {
        *reinterpret_cast<int2 *>(Y + i) = make_int2(inclusive - x1, inclusive);
    } else if (i < n) {
        Y[i] = inclusive - x1;
    }
}
