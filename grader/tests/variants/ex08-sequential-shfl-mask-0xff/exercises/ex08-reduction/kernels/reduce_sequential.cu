// ex08 `sequential` with a warp-shuffle finish whose mask is too small: the
// tree stops at 32 sums, and the 32 lanes of warp 0 add them with
// __shfl_down_sync(0xff, ...), a mask that names lanes 0..7 only. Every lane of
// the warp calls it: undefined behaviour, though a GPU may well add right.
#define THREADS 256 // == blockDim.x, fixed by the host

extern "C" __global__ void reduce_sequential(const int *in, int n, int *partial)
{
    __shared__ int partialSum[THREADS];
    unsigned int t = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + t;
    partialSum[t] = i < (unsigned int)n ? in[i] : 0;

    for (unsigned int stride = blockDim.x / 2; stride >= 32; stride >>= 1) {
        __syncthreads();
        if (t < stride)
            partialSum[t] += partialSum[t + stride];
    }
    __syncthreads();
    if (t < 32) {
        int v = partialSum[t];
        for (int offset = 16; offset > 0; offset >>= 1)
            v += __shfl_down_sync(0xff, v, offset);
        if (t == 0)
            partial[blockIdx.x] = v;
    }
}
