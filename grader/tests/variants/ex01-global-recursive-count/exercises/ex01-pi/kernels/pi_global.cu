// ex01 `global` with the hits of a thread's points counted by a recursive
// __device__ function: halve the run of points until one is left (pairwise).

__device__ unsigned int count_hits(const float *x, const float *y, int first, int count, int stride)
{
    if (count == 0)
        return 0;
    if (count == 1)
        return x[first] * x[first] + y[first] * y[first] <= 1.0f ? 1u : 0u;
    int half = count / 2;
    return count_hits(x, y, first, half, stride) + count_hits(x, y, first + half * stride, count - half, stride);
}

extern "C" __global__ void pi_global(const float *x, const float *y, int n, unsigned int *hits)
{
    int first = blockIdx.x * blockDim.x + threadIdx.x;
    int stride = gridDim.x * blockDim.x;
    // the points first, first + stride, ... below n
    int count = first < n ? (n - 1 - first) / stride + 1 : 0;
    unsigned int mine = count_hits(x, y, first, count, stride);
    if (mine > 0)
        atomicAdd(hits, mine);
}
