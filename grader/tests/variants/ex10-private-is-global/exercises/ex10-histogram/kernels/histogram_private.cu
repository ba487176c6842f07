// ex10 `private`, the wrong technique: one global atomic per byte, as in the
// `global` part. Correct; fails structure::merged-once-per-bin.
extern "C" __global__ void histogram_private(const unsigned char *data, unsigned int n, unsigned int *bins)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&bins[data[i]], 1u);
}
