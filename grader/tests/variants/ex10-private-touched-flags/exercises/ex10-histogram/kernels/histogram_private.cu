// ex10 `private`, correct: the shared atomic's result is used (atom, not red):
// the thread that takes a bin from 0 to 1 flags it, and only flagged bins merge.
extern "C" __global__ void histogram_private(const unsigned char *data, unsigned int n, unsigned int *bins)
{
    __shared__ unsigned int bins_s[256];
    __shared__ unsigned char touched[256];
    for (int b = threadIdx.x; b < 256; b += blockDim.x) {
        bins_s[b] = 0;
        touched[b] = 0;
    }
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < (int)n) {
        unsigned char v = data[i];
        if (atomicAdd(&bins_s[v], 1u) == 0u)
            touched[v] = 1;
    }
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += blockDim.x)
        if (touched[b])
            atomicAdd(&bins[b], bins_s[b]);
}
