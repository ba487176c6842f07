// Asynchronous copies into shared memory: cooperative_groups::memcpy_async
// with cg::wait (cp.async with commit and wait groups at sm_80 and later).
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
namespace cg = cooperative_groups;
extern "C" __global__ void k(const int *in_i, const float *in_f, const double *in_d, int *out_i, float *out_f, double *out_d, int n)
{
    __shared__ int ti[256];
    __shared__ float tf[256];
    __shared__ double td[256];
    cg::thread_block block = cg::this_thread_block();
    int base = blockIdx.x * blockDim.x;
    int count = min((int)blockDim.x, n - base);
    cg::memcpy_async(block, ti, in_i + base, sizeof(int) * count);
    cg::memcpy_async(block, tf, in_f + base, sizeof(float) * count);
    cg::wait(block);
    cg::memcpy_async(block, td, in_d + base, sizeof(double) * count);
    cg::wait_prior<0>(block);
    int t = threadIdx.x;
    if (t < count) {
        int next = (t + 1) % count;
        out_i[base + t] = ti[t] + 2 * ti[next];
        out_f[base + t] = tf[next];
        out_d[base + t] = td[t] + td[next];
    }
}
