// ex01, part `shared`: Monte Carlo pi, counting per block in shared memory.
//
// Same task as pi_global.cu: count the points (x[i], y[i]) with
// x*x + y*y <= 1 into *hits (zeroed by the host). Blocks of 256 threads, at most
// 1024 blocks, any n.
//
// This time every hit must NOT go to global memory. Instead each block keeps its
// own counter in shared memory, and only one thread per block adds the block's
// total to *hits at the end. Global atomics on one address are slow because they
// are serialized; shared-memory atomics are much cheaper, and this way global
// memory sees one update per block instead of one per hit.
//
// The grader checks the PTX for shared memory and a barrier, and times your
// kernel against a one-atomicAdd-per-hit kernel: yours must be clearly faster.

extern "C" __global__ void pi_shared(const float *x, const float *y, int n, unsigned int *hits)
{
    // TODO 1: declare the block's counter: __shared__ unsigned int block_hits;
    //         let one thread set it to 0, then __syncthreads() so no thread adds
    //         to it before it is cleared.
    // TODO 2: grid-stride loop over the points, as in pi_global.cu, but add each
    //         hit to the shared counter (atomicAdd works on shared memory too).
    //         Even better: count in a register and add once per thread.
    // TODO 3: __syncthreads() so that every thread's hits are in; then one
    //         thread (threadIdx.x == 0) adds block_hits to *hits with atomicAdd.
}
