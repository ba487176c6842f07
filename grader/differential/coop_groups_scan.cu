// Cooperative groups beyond the basics: inclusive/exclusive scans, float reduce,
// coalesced_threads, labeled_partition, binary_partition, a 16-thread tile,
// tile any/all/ballot/match_any. Compared with the GPU's digests only.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>
namespace cg = cooperative_groups;
extern "C" __global__ void k(const int *in_i, const float *in_f, const double *in_d, int *out_i, float *out_f, double *out_d, int n)
{
    cg::thread_block block = cg::this_thread_block();
    auto warp = cg::tiled_partition<32>(block);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? in_i[i] : 0;
    int inc = cg::inclusive_scan(warp, v);
    int exc = cg::exclusive_scan(warp, v, cg::plus<int>());
    float fs = cg::reduce(warp, i < n ? in_f[i] : 0.0f, cg::plus<float>());
    auto active = cg::coalesced_threads();
    auto part = cg::labeled_partition(warp, v & 3);
    auto bin = cg::binary_partition(warp, v > 0);
    int r = part.size() * 100 + bin.thread_rank() + active.size() * 10000 + part.thread_rank();
    auto t16 = cg::tiled_partition<16>(block);
    int m = cg::reduce(t16, v, cg::less<int>());
    unsigned any = warp.any(v > 500) + warp.all(v > -2000) * 2 + warp.ballot(v > 0);
    if (i < n) { out_i[i] = inc + exc * 3 + r + m + (int)any + warp.match_any(v & 1); out_f[i] = fs; out_d[i] = block.group_dim().x + block.group_index().x; }
}
