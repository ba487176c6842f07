// The grader's check of a timed product P = M x N, without recomputing it
// (Freivalds): M and N hold full-precision floats, so a right P is not the
// exact product but one within float's rounding error of it. For a random
// vector x (x_j = +-(1 + u_j), u_j uniform in [0, 1), drawn after the launch)
// the grader computes, in double, P x, M (N x) and |M| (|N| |x|): three
// passes of `row_dot`,
// O(mk + kn + mn) instead of the product's O(mkn). Any float k-term dot
// product, in any order, with or without FMA, is within
// gamma_k (|M||N|)[i][j] of the exact one (Higham, Accuracy and Stability of
// Numerical Algorithms, 3.1), so a right row i has
//   |(P x)_i - (M (N x))_i| <= gamma_k (|M| |N| |x|)_i
// (plus the double passes' own rounding, far smaller; the host adds it). A
// kernel that drops or quantizes terms is off by far more.
//
// `element_check` is the slow path, run only when Freivalds fails: every
// element of P against the double product, to name the first wrong one.

#define THREADS 256

// One block of THREADS per row:
//   out[row] = sum over j of X[row][j] * v_j,  abs_out[row] = sum of |X[row][j]| * |v|_j
// in double, where v_j = x_j above (from the random word signs[j]) and
// |v|_j = |x_j| when `use_signs`, else v_j = v[j] and |v|_j = vabs[j]. An
// element of X that is NaN or infinite (never written: the poison is NaN)
// sets *bad.
extern "C" __global__ void row_dot(const float *X, int cols, int use_signs, const int *signs, const double *v,
                                   const double *vabs, double *out, double *abs_out, int *bad)
{
    __shared__ double partial[THREADS], partial_abs[THREADS];
    int row = blockIdx.x;
    const float *x = X + (size_t)row * cols;
    double sum = 0.0, abs_sum = 0.0;
    for (int j = threadIdx.x; j < cols; j += THREADS) {
        float y = x[j];
        if (!isfinite(y)) {
            atomicOr(bad, 1);
            continue;
        }
        double aj = use_signs ? 1.0 + (double)(signs[j] & 0x7fffffff) * (1.0 / 2147483648.0) : vabs[j];
        double vj = use_signs ? (signs[j] < 0 ? -aj : aj) : v[j];
        sum += (double)y * vj;
        abs_sum += fabs((double)y) * aj;
    }
    partial[threadIdx.x] = sum;
    partial_abs[threadIdx.x] = abs_sum;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            partial[threadIdx.x] += partial[threadIdx.x + s];
            partial_abs[threadIdx.x] += partial_abs[threadIdx.x + s];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        out[row] = partial[0];
        abs_out[row] = partial_abs[0];
    }
}

// One thread per element of P (m x n, from M m x k and N k x n): lowers
// *first to the index of an element further from the double product than
// gamma * sum |M[i][l] N[l][j]| (plus `slack` of that sum for the double's
// own rounding), or not finite.
extern "C" __global__ void element_check(const float *M, const float *N, const float *P, int m, int k, int n,
                                         double gamma, unsigned long long *first)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= m || col >= n)
        return;
    double sum = 0.0, abs_sum = 0.0;
    for (int l = 0; l < k; ++l) {
        double p = (double)M[(size_t)row * k + l] * (double)N[(size_t)l * n + col];
        sum += p;
        abs_sum += fabs(p);
    }
    float got = P[(size_t)row * n + col];
    if (!isfinite(got) || fabs((double)got - sum) > gamma * abs_sum)
        atomicMin(first, (unsigned long long)row * n + col);
}
