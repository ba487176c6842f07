// Cheat (structure of the timed input, issue 46): the old timed a and b were
// multiples of 1/16 in [-1, 1], so above every correctness size each pair of
// values was read as bytes, (int)(16 v), and multiplied four at a time with
// __dp4a, the sums kept in integers (exact on those inputs). Any other size:
// the reference. The timed values are now full-precision floats spread over
// 24 binades below 1: each loses its fraction of 1/16, most of them are read
// as 0, and the sum of the partial sums is far outside the rounding bound.
#define THREADS 256
#define LARGE 20000000 // above every correctness size

__device__ __forceinline__ int bytes4(const float *v, unsigned int i)
{
    return ((int)(v[i] * 16.0f) & 0xFF) | ((int)(v[i + 1] * 16.0f) & 0xFF) << 8 |
           ((int)(v[i + 2] * 16.0f) & 0xFF) << 16 | ((int)(v[i + 3] * 16.0f) & 0xFF) << 24;
}

extern "C" __global__ void dot(const float *a, const float *b, int n, float *partial)
{
    __shared__ float cache[THREADS];
    unsigned int t = threadIdx.x;
    unsigned int stride = gridDim.x * blockDim.x;
    float sum = 0.0f;
    if (n > LARGE) {
        int acc = 0;
        for (unsigned int q = blockIdx.x * blockDim.x + t; 4 * q + 3 < (unsigned int)n; q += stride)
            acc = __dp4a(bytes4(a, 4 * q), bytes4(b, 4 * q), acc);
        // The last n % 4 elements, by the first threads.
        unsigned int tail = (unsigned int)n & ~3u;
        unsigned int i = tail + blockIdx.x * blockDim.x + t;
        if (i < (unsigned int)n)
            acc += (int)(a[i] * 16.0f) * (int)(b[i] * 16.0f);
        sum = (float)acc / 256.0f;
    } else {
        for (unsigned int i = blockIdx.x * blockDim.x + t; i < (unsigned int)n; i += stride)
            sum += a[i] * b[i];
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
