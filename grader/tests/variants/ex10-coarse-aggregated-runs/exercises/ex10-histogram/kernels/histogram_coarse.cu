// ex10 `coarse`, correct: interleaved reads with aggregation (PMPP 9.7): a
// thread keeps a run of equal bytes in a register and adds it with one shared
// atomic when the value changes.
extern "C" __global__ void histogram_coarse(const unsigned char *data, unsigned int n, unsigned int *bins)
{
    __shared__ unsigned int bins_s[256];
    for (unsigned int b = threadIdx.x; b < 256; b += blockDim.x)
        bins_s[b] = 0;
    __syncthreads();
    unsigned int accumulator = 0;
    int previous = -1;
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        int value = data[i];
        if (value == previous) {
            ++accumulator;
        } else {
            if (accumulator > 0)
                atomicAdd(&bins_s[previous], accumulator);
            accumulator = 1;
            previous = value;
        }
    }
    if (accumulator > 0)
        atomicAdd(&bins_s[previous], accumulator);
    __syncthreads();
    for (unsigned int b = threadIdx.x; b < 256; b += blockDim.x)
        if (bins_s[b] > 0)
            atomicAdd(&bins[b], bins_s[b]);
}
