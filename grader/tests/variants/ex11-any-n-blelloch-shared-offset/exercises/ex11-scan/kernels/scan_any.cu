// ex11 any-n, correct: scan_sections is Blelloch's exclusive scan (up-sweep,
// last element cleared, down-sweep swapping) made inclusive by adding each
// element back; add_sums reads the section's offset once per block into
// shared memory.
#define SECTION_SIZE 1024

extern "C" __global__ void scan_sections(const int *in, int *out, int *sums, int n) {
    __shared__ int T[SECTION_SIZE];
    int t = threadIdx.x;
    int a = blockIdx.x * SECTION_SIZE + t, b = a + blockDim.x;
    int xa = a < n ? in[a] : 0, xb = b < n ? in[b] : 0;
    T[t] = xa;
    T[t + blockDim.x] = xb;
    int offset = 1;
    for (int d = SECTION_SIZE / 2; d > 0; d /= 2) {
        __syncthreads();
        if (t < d) {
            int hi = offset * (2 * t + 2) - 1;
            T[hi] += T[hi - offset];
        }
        offset *= 2;
    }
    __syncthreads();
    if (t == 0) {
        sums[blockIdx.x] = T[SECTION_SIZE - 1];
        T[SECTION_SIZE - 1] = 0;
    }
    for (int d = 1; d < SECTION_SIZE; d *= 2) {
        offset /= 2;
        __syncthreads();
        if (t < d) {
            int lo = offset * (2 * t + 1) - 1, hi = offset * (2 * t + 2) - 1;
            int v = T[lo];
            T[lo] = T[hi];
            T[hi] += v;
        }
    }
    __syncthreads();
    if (a < n) out[a] = T[t] + xa;
    if (b < n) out[b] = T[t + blockDim.x] + xb;
}

extern "C" __global__ void add_sums(int *out, const int *scanned_sums, int n) {
    __shared__ int offset;
    if (blockIdx.x == 0) return;
    if (threadIdx.x == 0) offset = scanned_sums[blockIdx.x - 1];
    __syncthreads();
    int a = blockIdx.x * SECTION_SIZE + threadIdx.x, b = a + blockDim.x;
    if (a < n) out[a] += offset;
    if (b < n) out[b] += offset;
}
