// Variant (correct): cooperative groups. Each 32-thread tile adds its threads'
// counts with cg::reduce, the tile's first thread adds the sum to the shared
// counter, one global atomicAdd per block.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

extern "C" __global__ void pi_shared(const float *x, const float *y, int n, unsigned int *hits)
{
    __shared__ unsigned int block_hits;
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
    if (block.thread_rank() == 0)
        block_hits = 0;
    block.sync();

    unsigned int mine = 0;
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        mine += x[i] * x[i] + y[i] * y[i] <= 1.0f;
    unsigned int tile_hits = cg::reduce(tile, mine, cg::plus<unsigned int>());
    if (tile.thread_rank() == 0 && tile_hits > 0)
        atomicAdd(&block_hits, tile_hits);
    block.sync();

    if (block.thread_rank() == 0)
        atomicAdd(hits, block_hits);
}
