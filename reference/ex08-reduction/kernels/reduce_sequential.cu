// ex08 `sequential`, reference solution: the working threads are the first
// `stride` of the block, so whole warps are busy or idle until stride < 32.
#define THREADS 256 // == blockDim.x, fixed by the host

extern "C" __global__ void reduce_sequential(const int *in, int n, int *partial)
{
    __shared__ int partialSum[THREADS];
    unsigned int t = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + t; // unsigned: no overflow for n near 2^31
    partialSum[t] = i < (unsigned int)n ? in[i] : 0;

    for (unsigned int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        __syncthreads(); // the previous step's sums (or the loads) are visible
        if (t < stride)
            partialSum[t] += partialSum[t + stride];
    }
    // Thread 0 made the last addition itself: no barrier needed to read it.
    if (t == 0)
        partial[blockIdx.x] = partialSum[0];
}
