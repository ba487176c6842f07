// ex03, part `naive`: P = M x N with one thread per element of P.
//
// M, N and P are square width x width matrices of floats, stored row after row
// ("linearized"): element (row, col) of M is M[row * width + col].
//
//     P[row][col] = sum over i = 0 .. width-1 of M[row][i] * N[i][col]
//
// The launch: blocks of 16 x 16 threads; grid ceil(width / 16) x ceil(width / 16).
// threadIdx.x and blockIdx.x run along the columns of P, threadIdx.y and
// blockIdx.y along its rows. width is any value from 1 up, usually NOT a
// multiple of 16: the last row and column of blocks stick out of P, and their
// threads outside P must neither read nor write anything.
//
// Keep the `extern "C"` and the name and parameters exactly as they are: the
// grader looks the kernel up by name.

extern "C" __global__ void matmul_naive(const float *M, const float *N, float *P, int width)
{
    // TODO 1: compute this thread's row (from blockIdx.y, blockDim.y, threadIdx.y)
    //         and col (from the .x parts).
    // TODO 2: if (row, col) is outside P (row >= width or col >= width), do nothing.
    // TODO 3: accumulate the dot product of row `row` of M and column `col` of N
    //         in a float local variable (a register), i = 0 .. width-1.
    // TODO 4: write the sum to P[row * width + col], once.
}
