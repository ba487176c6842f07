// Calibration variant for ex02 `dot`: correct, with the same shared-memory
// tree and barriers as the reference (so it passes the structure check), but
// only block 0 works: its 256 threads stride over the whole of a and b while
// every other block writes 0. One multiprocessor streams all the data, so the
// kernel reaches a small share of the copy bandwidth. It must fail
// `perf::share-of-copy-bandwidth`, and only that: its threads add in double,
// since a float sum of the 245 000 products each thread of one block adds at
// the timed size (on an H200) may leave the README's rounding bound, which
// counts the additions of a thread of the full grid (a kernel summing in
// float this way is `wrong-when-timed` there, as the README's bound says).
#define THREADS 256

extern "C" __global__ void dot(const float *a, const float *b, int n, float *partial)
{
    __shared__ float cache[THREADS];
    unsigned int t = threadIdx.x;

    double sum = 0.0;
    if (blockIdx.x == 0)
        for (unsigned int i = t; i < (unsigned int)n; i += blockDim.x)
            sum += (double)a[i] * b[i];
    cache[t] = (float)sum;

    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        __syncthreads();
        if (t < s)
            cache[t] += cache[t + s];
    }
    if (t == 0)
        partial[blockIdx.x] = cache[0];
}
