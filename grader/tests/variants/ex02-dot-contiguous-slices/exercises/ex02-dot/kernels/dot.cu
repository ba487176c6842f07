// Variant (right numbers, uncoalesced): each thread sums its own contiguous
// slice of ceil(n / threads) elements, then the reference's shared tree. With
// one element per thread the slices are the grid-stride loop; with four, the
// 32 lanes of a warp read floats 16 bytes apart (16 sectors per request).
#define THREADS 256
extern "C" __global__ void dot(const float *a, const float *b, int n, float *partial)
{
    __shared__ float cache[THREADS];
    unsigned int t = threadIdx.x;
    unsigned int threads = gridDim.x * blockDim.x;
    unsigned int per = ((unsigned int)n + threads - 1) / threads;
    unsigned int first = (blockIdx.x * blockDim.x + t) * per;
    unsigned int end = min(first + per, (unsigned int)n);
    float sum = 0.0f;
    for (unsigned int i = first; i < end; i++)
        sum += a[i] * b[i];
    cache[t] = sum;
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        __syncthreads();
        if (t < s)
            cache[t] += cache[t + s];
    }
    if (t == 0)
        partial[blockIdx.x] = cache[0];
}
