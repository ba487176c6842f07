// The pattern `sequential` must beat: the slides' interleaved addressing
// (t % (2*stride) == 0), one element per thread, one partial sum per block.
// Timed by the grader in the same run, on the same input, as the student's kernel.
extern "C" __global__ void reduce_interleaved_pattern(const int *in, int n, int *partial)
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
