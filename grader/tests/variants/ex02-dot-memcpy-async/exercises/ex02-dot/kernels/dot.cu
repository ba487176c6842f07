// Variant (correct): each block stages its slice of a and b in shared memory
// with cooperative_groups::memcpy_async (cp.async at sm_80 and later), waits
// with cg::wait, multiplies, then the reference's shared tree.
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
namespace cg = cooperative_groups;
#define THREADS 256 // == blockDim.x, fixed by the host

extern "C" __global__ void dot(const float *a, const float *b, int n, float *partial)
{
    __shared__ float sa[THREADS];
    __shared__ float sb[THREADS];
    __shared__ float cache[THREADS];
    cg::thread_block block = cg::this_thread_block();
    unsigned int t = threadIdx.x;
    float sum = 0.0f;
    unsigned int stride = gridDim.x * blockDim.x;
    for (unsigned int base = blockIdx.x * blockDim.x; base < (unsigned int)n; base += stride) {
        unsigned int count = min((unsigned int)THREADS, (unsigned int)n - base);
        cg::memcpy_async(block, sa, a + base, sizeof(float) * count);
        cg::memcpy_async(block, sb, b + base, sizeof(float) * count);
        cg::wait(block);
        if (t < count)
            sum += sa[t] * sb[t];
        block.sync(); // before the next slice overwrites sa and sb
    }
    cache[t] = sum;
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        __syncthreads();
        if (t < s)
            cache[t] += cache[t + s];
    }
    if (t == 0)
        partial[blockIdx.x] = cache[0];
}
