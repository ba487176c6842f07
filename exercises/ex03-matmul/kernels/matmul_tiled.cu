// ex03, part `tiled`: P = M x N with tiles of M and N staged in shared memory.
//
// Same product as matmul_naive.cu (square width x width matrices, row-major,
// one thread per element of P), but here width is a multiple of TILE.
//
// The launch: blocks of TILE x TILE = 16 x 16 threads, grid (width / TILE) x
// (width / TILE). Block (bx, by) computes the TILE x TILE tile of P whose top-left
// element is (by * TILE, bx * TILE).
//
// Why: in matmul_naive every thread reads a whole row of M and a whole column of
// N from global memory, so each element of M and N is read `width` times. The
// threads of one block need the same TILE rows of M and TILE columns of N, so
// the block loads them once, tile by tile, into shared memory, and every thread
// then reads TILE values from shared memory for each value it loaded: TILE times
// fewer global reads.
//
// The grader checks the PTX for shared memory and two barriers, and times your
// kernel against the naive one on a 4096 x 4096 product: yours must be clearly faster.

#define TILE 16

extern "C" __global__ void matmul_tiled(const float *M, const float *N, float *P, int width)
{
    // TODO 1: declare the two tiles: __shared__ float Ms[TILE][TILE], Ns[TILE][TILE];
    //         and compute row = blockIdx.y * TILE + threadIdx.y and
    //         col = blockIdx.x * TILE + threadIdx.x.
    // TODO 2: loop over the width / TILE phases t. In phase t, every thread loads
    //         ONE element of each tile:
    //           Ms[ty][tx] = M[row][t * TILE + tx]
    //           Ns[ty][tx] = N[t * TILE + ty][col]
    //         (written linearized, as in matmul_naive.cu).
    // TODO 3: __syncthreads(): nobody may read the tiles before all of them are loaded.
    // TODO 4: add the TILE products Ms[ty][i] * Ns[i][tx] to a float register.
    // TODO 5: __syncthreads() again: nobody may load the next phase's tiles while
    //         others still read this phase's.
    // TODO 6: after the loop, write the sum to P[row * width + col].
}
