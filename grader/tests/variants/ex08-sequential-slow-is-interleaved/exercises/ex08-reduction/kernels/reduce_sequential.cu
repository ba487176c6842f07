// Calibration variant for ex08 `sequential`: correct, uses shared memory and
// barriers (so it passes the structure check), but it is the interleaved
// pattern (t % (2*stride)) under the sequential kernel's name. It must fail
// `perf::faster-than-interleaved`.
extern "C" __global__ void reduce_sequential(const int *in, int n, int *partial)
{
    __shared__ int partialSum[256];
    unsigned int t = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + t; // unsigned: no overflow for n near 2^31
    partialSum[t] = i < (unsigned int)n ? in[i] : 0;
    for (unsigned int stride = 1; stride < blockDim.x; stride *= 2) {
        __syncthreads();
        if (t % (2 * stride) == 0)
            partialSum[t] += partialSum[t + stride];
    }
    if (t == 0)
        partial[blockIdx.x] = partialSum[0];
}
