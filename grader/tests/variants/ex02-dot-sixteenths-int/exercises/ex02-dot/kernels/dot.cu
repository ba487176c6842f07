// Variant (issue 46): products in integers, written for the old timed inputs
// (a and b multiples of 1/16 in [-1, 1], exact as bytes): each value read as
// (int)(16 v), the products summed in an int and scaled back. Exact on those
// and on the exact-n checks' 1, 2 and 3; on floats uniform in [0, 1) each
// value loses its fraction of 1/16 (about 6 % of the sum): wrong.
#define THREADS 256

extern "C" __global__ void dot(const float *a, const float *b, int n, float *partial)
{
    __shared__ int cache[THREADS];
    unsigned int t = threadIdx.x;

    int sum = 0;
    unsigned int stride = gridDim.x * blockDim.x;
    for (unsigned int i = blockIdx.x * blockDim.x + t; i < (unsigned int)n; i += stride)
        sum += (int)(a[i] * 16.0f) * (int)(b[i] * 16.0f);
    cache[t] = sum;

    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        __syncthreads();
        if (t < s)
            cache[t] += cache[t + s];
    }
    if (t == 0)
        partial[blockIdx.x] = (float)cache[0] / 256.0f;
}
