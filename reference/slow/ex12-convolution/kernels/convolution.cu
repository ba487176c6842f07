// Calibration variant for ex12 `convolution`: correct, but each thread scales a
// chunk of 32 consecutive elements, so the 32 threads of a warp touch 32
// different sectors per request. Must fail `perf::share-of-copy` and its
// measured stand-in (and only those).
#define CHUNK 32

extern "C" __global__ void convolution(const float *in, float *out, int n)
{
    int first = (blockIdx.x * blockDim.x + threadIdx.x) * CHUNK;
    for (int i = first; i < first + CHUNK && i < n; i++)
        out[i] = 2.0f * in[i];
}
