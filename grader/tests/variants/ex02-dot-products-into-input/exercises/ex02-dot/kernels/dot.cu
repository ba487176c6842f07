// ex02 `dot`, variant: right partial sums, but each thread first stores its
// products into `a` (casting `const` away) and sums them from there. The
// output is right; the input is not what was uploaded any more.
#define THREADS 256 // == blockDim.x, fixed by the host

extern "C" __global__ void dot(const float *a, const float *b, int n, float *partial)
{
    __shared__ float cache[THREADS];
    unsigned int t = threadIdx.x;
    float *products = (float *)a;

    float sum = 0.0f;
    unsigned int stride = gridDim.x * blockDim.x;
    for (unsigned int i = blockIdx.x * blockDim.x + t; i < (unsigned int)n; i += stride) {
        products[i] = a[i] * b[i];
        sum += products[i];
    }
    cache[t] = sum;

    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        __syncthreads();
        if (t < s)
            cache[t] += cache[t + s];
    }
    if (t == 0)
        partial[blockIdx.x] = cache[0];
}
