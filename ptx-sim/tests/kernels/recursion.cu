// Recursive device functions (called, not inlined: ptx-sim's compile::recursion).

// Pairwise sum of a[first], a[first + stride], ... (count of them): two calls
// per level, so the compiler cannot turn it into a loop.
__device__ int pairwise(const int *a, int first, int count, int stride)
{
    if (count == 0)
        return 0;
    if (count == 1)
        return a[first];
    int half = count / 2;
    return pairwise(a, first, half, stride) + pairwise(a, first + half * stride, count - half, stride);
}

extern "C" __global__ void sums(const int *a, int n, int *out)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int stride = gridDim.x * blockDim.x;
    // a different count per thread: lanes recurse to different depths
    int count = t < n ? (n - 1 - t) / stride + 1 : 0;
    out[t] = pairwise(a, t, count, stride);
}

// Fibonacci with a local array per activation (per-frame local memory).
__device__ int fib(int k)
{
    volatile int memo[4];
    memo[0] = k;
    if (k < 2)
        return k;
    int r = fib(k - 1) + fib(k - 2);
    return r + memo[0] - k; // memo[0] is still this activation's k
}

extern "C" __global__ void fibs(int *out, int depth)
{
    int t = threadIdx.x;
    out[t] = fib(t % 12 + depth);
}
