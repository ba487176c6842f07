// ex11 brent-kung, a correct variant: Blelloch's exclusive scan (up-sweep,
// the root cleared, a down-sweep that swaps and adds), made inclusive by
// adding each thread's own two elements, kept in registers. About 3
// additions per element: still work-efficient.
#define SECTION_SIZE 1024

extern "C" __global__ void brent_kung_scan(const int *X, int *Y, int n) {
    __shared__ int temp[SECTION_SIZE];
    const int t = threadIdx.x;
    const int base = blockIdx.x * SECTION_SIZE;
    const int a = base + t, b = a + SECTION_SIZE / 2;
    const int va = a < n ? X[a] : 0;
    const int vb = b < n ? X[b] : 0;
    temp[t] = va;
    temp[t + SECTION_SIZE / 2] = vb;
    int offset = 1;
    for (int d = SECTION_SIZE >> 1; d > 0; d >>= 1) {
        __syncthreads();
        if (t < d) {
            int ai = offset * (2 * t + 1) - 1, bi = offset * (2 * t + 2) - 1;
            temp[bi] += temp[ai];
        }
        offset *= 2;
    }
    if (t == 0) temp[SECTION_SIZE - 1] = 0;
    for (int d = 1; d < SECTION_SIZE; d *= 2) {
        offset >>= 1;
        __syncthreads();
        if (t < d) {
            int ai = offset * (2 * t + 1) - 1, bi = offset * (2 * t + 2) - 1;
            int x = temp[ai];
            temp[ai] = temp[bi];
            temp[bi] += x;
        }
    }
    __syncthreads();
    if (a < n) Y[a] = temp[t] + va;
    if (b < n) Y[b] = temp[t + SECTION_SIZE / 2] + vb;
}
