// Variant (correct): one shared counter per warp, sized and indexed with
// warpSize (NVRTC writes it as the PTX identifier WARP_SZ), then thread 0 adds
// the warps' counts and makes one global atomicAdd.
extern "C" __global__ void pi_shared(const float *x, const float *y, int n, unsigned int *hits)
{
    __shared__ unsigned int per_warp[32];
    unsigned int t = threadIdx.x;
    unsigned int warps = (blockDim.x + warpSize - 1) / warpSize;
    if (t < warps)
        per_warp[t] = 0;
    __syncthreads();
    unsigned int mine = 0;
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + t; i < n; i += stride) {
        if (x[i] * x[i] + y[i] * y[i] <= 1.0f)
            mine++;
    }
    if (mine > 0)
        atomicAdd(&per_warp[t / warpSize], mine);
    __syncthreads();
    if (t == 0) {
        unsigned int sum = 0;
        for (unsigned int w = 0; w < warps; w++)
            sum += per_warp[w];
        atomicAdd(hits, sum);
    }
}
