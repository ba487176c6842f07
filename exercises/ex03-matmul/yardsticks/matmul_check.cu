// The grader's check of a timed product P = M x N, without recomputing it
// (Freivalds): M holds multiples of 2^-12 in (-1, 1) and N holds -1, 0, 1, so
// A = 4096 M, B = N and C = 4096 P are integer matrices, and P is right
// exactly when C = A B. For a random vector r the grader compares C r with
// A (B r), in 64-bit integers that wrap (mod 2^64): three passes of
// `row_dot`, O(mk + kn + mn) instead of the product's O(mkn).
//
// An element that is wrong changes its row's sum, unless its error times
// r_j vanishes mod 2^64: the errors are integers below 2^25 in magnitude
// (|P| < k <= 4096 when right; larger is caught below), so for a uniform
// r that happens with probability at most 2^-39 per row.

// One block of THREADS per row: out[row] = sum over j of (X[row][j] * scale) * v[j] mod 2^64.
// An element of X times `scale` that is not an integer of magnitude at most
// `limit` (NaN, infinite, not a multiple of 1 / scale, too large) cannot
// belong to a right product: it sets *bad instead of adding.
#define THREADS 256

extern "C" __global__ void row_dot(const float *X, int cols, float scale, float limit,
                                   const unsigned long long *v, unsigned long long *out, int *bad)
{
    __shared__ unsigned long long partial[THREADS];
    int row = blockIdx.x;
    const float *x = X + (size_t)row * cols;
    unsigned long long sum = 0;
    for (int j = threadIdx.x; j < cols; j += THREADS) {
        float y = x[j] * scale; // exact: scale is a power of two
        if (!(fabsf(y) <= limit) || y != truncf(y)) {
            atomicOr(bad, 1);
            continue;
        }
        sum += (unsigned long long)(long long)y * v[j];
    }
    partial[threadIdx.x] = sum;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            partial[threadIdx.x] += partial[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[row] = partial[0];
}
