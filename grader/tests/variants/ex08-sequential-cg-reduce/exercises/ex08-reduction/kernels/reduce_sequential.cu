// Variant (issue 51): cooperative groups' collectives. Each 32-thread tile adds
// its threads' values with cg::reduce, the eight tile sums go through shared
// memory, and the first tile adds them with cg::reduce again.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
#define THREADS 256 // == blockDim.x, fixed by the host

extern "C" __global__ void reduce_sequential(const int *in, int n, int *partial)
{
    __shared__ int tileSums[THREADS / 32];
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    int mine = i < (unsigned int)n ? in[i] : 0;
    int sum = cg::reduce(tile, mine, cg::plus<int>());
    if (tile.thread_rank() == 0)
        tileSums[tile.meta_group_rank()] = sum;
    block.sync();
    if (tile.meta_group_rank() == 0) {
        int s = tile.thread_rank() < THREADS / 32 ? tileSums[tile.thread_rank()] : 0;
        s = cg::reduce(tile, s, cg::plus<int>());
        if (tile.thread_rank() == 0)
            partial[blockIdx.x] = s;
    }
}
