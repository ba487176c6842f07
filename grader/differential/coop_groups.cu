// Cooperative groups: thread_block, tiled_partition (static and dynamic),
// cg::reduce, tile shuffles, thread_rank, sync, and warpSize (WARP_SZ in PTX).
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
extern "C" __global__ void k(const int *in_i, const float *in_f, const double *in_d, int *out_i, float *out_f, double *out_d, int n)
{
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    cg::thread_group quad = cg::tiled_partition(block, 4);
    int i = blockIdx.x * blockDim.x + block.thread_rank();
    int v = i < n ? in_i[i] : 0;
    int wsum = cg::reduce(warp, v, cg::plus<int>());
    int wmax = cg::reduce(warp, v, cg::greater<int>());
    int down = warp.shfl_down(v, 1);
    int first = warp.shfl(v, 0);
    block.sync();
    quad.sync();
    warp.sync();
    if (i < n) {
        out_i[i] = wsum + 3 * wmax + 5 * (warp.thread_rank() == 31 ? 0 : down) + 7 * first;
        out_f[i] = (float)(warpSize * 1000 + (int)quad.thread_rank() * 100 + (int)warp.meta_group_rank() * 10 +
                           (int)quad.size());
        out_d[i] = (double)block.size() + (double)warp.size();
    }
}
