// Variant (correct): the grid-stride loop unrolled by four with __ldg loads and
// __restrict__ pointers; the shared counter as in the notes.
extern "C" __global__ void pi_shared(const float *__restrict__ x, const float *__restrict__ y, int n,
                                     unsigned int *__restrict__ hits)
{
    __shared__ unsigned int block_hits;
    if (threadIdx.x == 0)
        block_hits = 0;
    __syncthreads();

    unsigned int mine = 0;
    int stride = gridDim.x * blockDim.x;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + 3 * stride < n; i += 4 * stride) {
#pragma unroll
        for (int u = 0; u < 4; u++) {
            float a = __ldg(&x[i + u * stride]), b = __ldg(&y[i + u * stride]);
            mine += a * a + b * b <= 1.0f;
        }
    }
    for (; i < n; i += stride)
        mine += x[i] * x[i] + y[i] * y[i] <= 1.0f;
    if (mine > 0)
        atomicAdd(&block_hits, mine);
    __syncthreads();
    if (threadIdx.x == 0)
        atomicAdd(hits, block_hits);
}
