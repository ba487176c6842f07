// ex10 `private`, broken: written with int indices, a counting loop over the
// grid and a merge loop over the bins, and no __syncthreads() between
// counting and merging: warp 0 merges bins the block's other warps have not
// counted into yet.
extern "C" __global__ void histogram_private(const unsigned char *data, unsigned int n, unsigned int *bins)
{
    __shared__ unsigned int hist[256];
    int t = threadIdx.x;
    for (int b = t; b < 256; b += blockDim.x)
        hist[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + t; i < (int)n; i += blockDim.x * gridDim.x)
        atomicAdd(&hist[data[i]], 1);
    for (int b = t; b < 256; b += blockDim.x) {
        unsigned int c = hist[b];
        if (c) atomicAdd(&bins[b], c);
    }
}
