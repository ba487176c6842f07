// ex02 `dot`, reference solution: each thread accumulates its products over a
// grid-stride loop in a register (coalesced loads, one pass over a and b), then
// the block reduces its 256 sums in shared memory with sequential addressing
// and thread 0 writes the block's partial sum.
#define THREADS 256 // == blockDim.x, fixed by the host

extern "C" __global__ void dot(const float *a, const float *b, int n, float *partial)
{
    __shared__ float cache[THREADS];
    unsigned int t = threadIdx.x;

    float sum = 0.0f;
    // Unsigned: i + stride cannot overflow for any int n.
    unsigned int stride = gridDim.x * blockDim.x;
    for (unsigned int i = blockIdx.x * blockDim.x + t; i < (unsigned int)n; i += stride)
        sum += a[i] * b[i];
    cache[t] = sum;

    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        __syncthreads(); // the previous step's sums (or the stores above) are visible
        if (t < s)
            cache[t] += cache[t + s];
    }
    // Thread 0 made the last addition itself: no barrier needed to read it.
    if (t == 0)
        partial[blockIdx.x] = cache[0];
}
