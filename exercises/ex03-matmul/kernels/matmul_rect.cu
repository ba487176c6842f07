// ex03, part `rect`: P = M x N for any shapes, tiled in shared memory.
//
// M is m x k, N is k x n, P is m x n, all floats stored row after row:
//   M[row][i] is M[row * k + i],  N[i][col] is N[i * n + col],  P[row][col] is P[row * n + col].
//
//     P[row][col] = sum over i = 0 .. k-1 of M[row][i] * N[i][col]
//
// m, k and n are anything from 1 up: 1 x 1 x 1, tall and skinny (4096 x 16 times
// 16 x 7), wide inner dimension (1 x 300 times 300 x 70), and mostly NOT
// multiples of TILE.
//
// The launch: blocks of TILE x TILE = 16 x 16 threads, grid ceil(n / TILE) (x,
// columns of P) by ceil(m / TILE) (y, rows of P). Block (bx, by) computes the
// tile of P whose top-left element is (by * TILE, bx * TILE); at the bottom and
// right edges part of that tile lies outside P.
//
// Same idea as matmul_tiled.cu, with bounds: a tile element outside M or N is
// loaded as 0.0f (it then adds nothing to the sum) and never read from memory.
// The grader places NaN right after the end of M and of N, so a load that runs
// off a matrix turns results into NaN.
//
// The grader checks the PTX for shared memory and two barriers, and times your
// kernel against the naive pattern on a 2047 x 3001 times 3001 x 2501 product.

#define TILE 16

extern "C" __global__ void matmul_rect(const float *M, const float *N, float *P, int m, int k, int n)
{
    // TODO 1: declare the tiles Ms and Ns (TILE x TILE floats, __shared__) and
    //         compute row and col of this thread's element of P.
    // TODO 2: loop over ceil(k / TILE) phases t. Load
    //           Ms[ty][tx] = M[row][t * TILE + tx]   if row < m and t * TILE + tx < k, else 0.0f
    //           Ns[ty][tx] = N[t * TILE + ty][col]   if t * TILE + ty < k and col < n, else 0.0f
    // TODO 3: __syncthreads(), add the TILE products Ms[ty][i] * Ns[i][tx],
    //         __syncthreads() again (see matmul_tiled.cu for why both).
    //         Every thread of the block must reach both barriers, including the
    //         threads outside P: do not return before the loop.
    // TODO 4: after the loop, only threads inside P (row < m and col < n) write
    //         P[row * n + col].
}
