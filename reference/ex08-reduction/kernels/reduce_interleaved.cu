// ex08 `interleaved`, reference solution: the slides' first version. At step
// `stride`, thread t works when t is a multiple of 2*stride, so busy and idle
// threads alternate inside every warp (divergence).
#define THREADS 256 // == blockDim.x, fixed by the host

extern "C" __global__ void reduce_interleaved(const int *in, int n, int *partial)
{
    __shared__ int partialSum[THREADS];
    unsigned int t = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + t; // unsigned: no overflow for n near 2^31
    partialSum[t] = i < (unsigned int)n ? in[i] : 0;

    for (unsigned int stride = 1; stride < blockDim.x; stride *= 2) {
        __syncthreads(); // the previous step's sums (or the loads) are visible
        if (t % (2 * stride) == 0)
            partialSum[t] += partialSum[t + stride];
    }
    // Thread 0 made the last addition itself: no barrier needed to read it.
    if (t == 0)
        partial[blockIdx.x] = partialSum[0];
}
