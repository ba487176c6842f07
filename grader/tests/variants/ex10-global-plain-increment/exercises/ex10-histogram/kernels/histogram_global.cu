// ex10 `global`, broken: bins[data[i]]++ without an atomic: threads that add to
// the same bin at once lose counts.
extern "C" __global__ void histogram_global(const unsigned char *data, unsigned int n, unsigned int *bins)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        bins[data[i]]++;
}
