// ex11 any-n, a correct variant, thread-coarsened: scan_sections loads two
// consecutive elements per thread (int2), scans the 512 pair sums with
// Brent-Kung; add_sums reads the offset once per block through shared memory.
#define SECTION_SIZE 1024
#define PAIRS (SECTION_SIZE / 2)

extern "C" __global__ void scan_sections(const int *__restrict__ in, int *__restrict__ out, int *__restrict__ sums,
                                         int n) {
    __shared__ int S[PAIRS];
    const int t = threadIdx.x;
    const int i = blockIdx.x * SECTION_SIZE + 2 * t;
    int x0 = 0, x1 = 0;
    if (i + 1 < n) {
        int2 v = *reinterpret_cast<const int2 *>(in + i);
        x0 = v.x;
        x1 = v.y;
    } else if (i < n) {
        x0 = in[i];
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
        *reinterpret_cast<int2 *>(out + i) = make_int2(inclusive - x1, inclusive);
    } else if (i < n) {
        out[i] = inclusive - x1;
    }
    if (t == PAIRS - 1) sums[blockIdx.x] = inclusive;
}

extern "C" __global__ void add_sums(int *__restrict__ out, const int *__restrict__ scanned_sums, int n) {
    __shared__ int offset;
    if (blockIdx.x == 0) return;
    if (threadIdx.x == 0) offset = scanned_sums[blockIdx.x - 1];
    __syncthreads();
    const int i = blockIdx.x * SECTION_SIZE + 2 * threadIdx.x;
    if (i + 1 < n) {
        int2 v = *reinterpret_cast<int2 *>(out + i);
        *reinterpret_cast<int2 *>(out + i) = make_int2(v.x + offset, v.y + offset);
    } else if (i < n) {
        out[i] += offset;
    }
}
