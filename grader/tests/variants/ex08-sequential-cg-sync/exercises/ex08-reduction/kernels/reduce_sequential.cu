// Variant (correct): the reference's sequential addressing with the block's
// barrier spelled as cooperative groups' block.sync().
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
#define THREADS 256 // == blockDim.x, fixed by the host

extern "C" __global__ void reduce_sequential(const int *in, int n, int *partial)
{
    __shared__ int partialSum[THREADS];
    cg::thread_block block = cg::this_thread_block();
    unsigned int t = block.thread_rank();
    unsigned int i = blockIdx.x * blockDim.x + t;
    partialSum[t] = i < (unsigned int)n ? in[i] : 0;

    for (unsigned int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        block.sync();
        if (t < stride)
            partialSum[t] += partialSum[t + stride];
    }
    if (t == 0)
        partial[blockIdx.x] = partialSum[0];
}
