// Style variant for ex08 `interleaved` (measured checks): the interleaved tree
// with a bit mask instead of `%` and the index kept in a register walk.
// Correct and interleaved: must pass `shared-tree`.
extern "C" __global__ void reduce_interleaved(const int *__restrict__ in, int n, int *__restrict__ partial)
{
    __shared__ int sums[256];
    int t = threadIdx.x;
    int i = blockIdx.x * 256 + t;
    sums[t] = i < n ? __ldg(in + i) : 0;
    for (int stride = 1; stride < 256; stride <<= 1) {
        __syncthreads();
        if ((t & (2 * stride - 1)) == 0)
            sums[t] += sums[t + stride];
    }
    if (t == 0)
        partial[blockIdx.x] = sums[0];
}
