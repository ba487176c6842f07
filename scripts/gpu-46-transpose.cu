// Issue 46.6 for ex07, on a GPU machine:
//   nvcc -O3 -arch=sm_90 -o /tmp/transpose scripts/gpu-46-transpose.cu && /tmp/transpose
// Does the naive transpose's time (the yardstick of coalesced's faster-than-naive)
// depend on where its two 8192 x 8192 buffers lie? Times it, and the coalesced
// reference, on buffers at many offsets inside one pool and on separate allocations.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include "../exercises/ex07-transpose/yardsticks/naive_transpose.cu"
#include "../reference/ex07-transpose/kernels/transpose_coalesced.cu"
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)
const int W = 8192;
const size_t BYTES = size_t(W) * W * 4;
cudaEvent_t a, b;
float timeit(float *out, const float *in, int which) {
    std::vector<float> t;
    dim3 grid(W / 32, W / 32), block(32, 8);
    for (int r = 0; r < 23; ++r) {
        cudaEventRecord(a);
        if (which == 0) naive_transpose<<<grid, block>>>(out, in, W, W);
        else transpose_coalesced<<<grid, block>>>(out, in, W, W);
        cudaEventRecord(b);
        CK(cudaEventSynchronize(b)); float ms; cudaEventElapsedTime(&ms, a, b); if (r >= 3) t.push_back(ms);
    }
    std::sort(t.begin(), t.end()); return t[t.size() / 2];
}
void row(const char *what, size_t off_in, size_t off_out, float *out, const float *in) {
    float n = timeit(out, in, 0), c = timeit(out, in, 1);
    printf("%-10s in+%8zu KiB out+%8zu KiB  naive %.4f ms  coalesced %.4f ms  ratio %.3f\n", what, off_in >> 10, off_out >> 10, n, c, n / c);
}
int main() {
    cudaEventCreate(&a); cudaEventCreate(&b);
    size_t pool_bytes = 2 * BYTES + (256ull << 20);
    char *pool; CK(cudaMalloc(&pool, pool_bytes)); CK(cudaMemset(pool, 0, pool_bytes));
    size_t steps[] = {0, 4096, 65536, 1 << 20, 2 << 20, 4 << 20, 8 << 20, 16 << 20, 32 << 20, 64 << 20, 100 << 20, 128 << 20};
    for (size_t s : steps) row("pool-out", 0, BYTES + s, (float *)(pool + BYTES + s), (const float *)pool);
    for (size_t s : steps) row("pool-in", s, BYTES + (128 << 20), (float *)(pool + BYTES + (128 << 20)), (const float *)(pool + s));
    CK(cudaFree(pool));
    std::vector<void *> keep;
    for (int k = 0; k < 8; ++k) {
        float *in, *out; CK(cudaMalloc(&in, BYTES)); CK(cudaMalloc(&out, BYTES));
        CK(cudaMemset(in, 0, BYTES)); CK(cudaMemset(out, 0, BYTES));
        char what[32]; snprintf(what, sizeof what, "malloc-%d", k);
        row(what, (size_t)in & 0xFFFFFFF, (size_t)out & 0xFFFFFFF, out, in);
        void *pad; CK(cudaMalloc(&pad, (size_t)(k + 1) * (6 << 20))); keep.push_back(pad); keep.push_back(in); keep.push_back(out);
    }
    return 0;
}
