// Wrong-technique variant for ex12 (measured stand-in): a grid-stride loop
// over chunks of 8 consecutive elements per thread. Correct, uncoalesced: must
// fail the stand-in of `share-of-copy`.
#define CHUNK 8

extern "C" __global__ void convolution(const float *in, float *out, int n)
{
    int threads = gridDim.x * blockDim.x;
    for (int first = (blockIdx.x * blockDim.x + threadIdx.x) * CHUNK; first < n; first += threads * CHUNK)
        for (int i = first; i < first + CHUNK && i < n; i++)
            out[i] = 2.0f * in[i];
}
