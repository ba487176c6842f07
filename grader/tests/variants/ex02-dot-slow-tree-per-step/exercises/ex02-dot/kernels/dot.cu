// Variant (slow, a real mistake): the block reduces every step's 256 products
// with a shared-memory tree and thread 0 adds the step's total to a running
// sum, instead of each thread summing its products in a register and the
// block reducing once at the end. Right numbers and coalesced loads, but nine
// barriers and a tree for every 256 products.
#define THREADS 256 // == blockDim.x, fixed by the host

extern "C" __global__ void dot(const float *a, const float *b, int n, float *partial)
{
    __shared__ float cache[THREADS];
    unsigned int t = threadIdx.x;
    float total = 0.0f; // thread 0's
    unsigned int stride = gridDim.x * blockDim.x;
    // Every thread of the block runs the same number of steps (the barriers).
    for (unsigned int base = blockIdx.x * blockDim.x; base < (unsigned int)n; base += stride) {
        unsigned int i = base + t;
        cache[t] = i < (unsigned int)n ? a[i] * b[i] : 0.0f;
        for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
            __syncthreads();
            if (t < s)
                cache[t] += cache[t + s];
        }
        if (t == 0)
            total += cache[0];
        __syncthreads(); // cache[0] is read before the next step overwrites it
    }
    if (t == 0)
        partial[blockIdx.x] = total;
}
