// ex02 `dot` as the threadfence reduction without its __threadfence(): each
// block writes its partial sum and takes a ticket with atomicInc, and the
// block that draws the last ticket adds every partial on the device. Without
// the fence, nothing makes a block's partial visible before its ticket: the
// last block may add a stale partial. The host still adds the partials, so
// the numbers come out right; it is a race between blocks all the same.
#define THREADS 256 // == blockDim.x, fixed by the host

__device__ unsigned int tickets = 0;
__device__ float dot_total = 0.0f;

extern "C" __global__ void dot(const float *a, const float *b, int n, float *partial)
{
    __shared__ float cache[THREADS];
    __shared__ bool last;
    unsigned int t = threadIdx.x;

    float sum = 0.0f;
    unsigned int stride = gridDim.x * blockDim.x;
    for (unsigned int i = blockIdx.x * blockDim.x + t; i < (unsigned int)n; i += stride)
        sum += a[i] * b[i];
    cache[t] = sum;

    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        __syncthreads();
        if (t < s)
            cache[t] += cache[t + s];
    }
    if (t == 0) {
        partial[blockIdx.x] = cache[0];
        unsigned int ticket = atomicInc(&tickets, gridDim.x);
        last = ticket == gridDim.x - 1;
    }
    __syncthreads();

    if (last && t == 0) {
        float total = 0.0f;
        for (unsigned int k = 0; k < gridDim.x; k++)
            total += partial[k];
        dot_total = total;
        tickets = 0; // ready for the next launch
    }
}
