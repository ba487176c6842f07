// ex10 `coarse`, the wrong technique with wide reads: each thread counts a
// contiguous chunk of its own, 16 bytes at a time (int4). Each read is wide,
// but the lanes of a warp are a chunk apart. Correct; fails
// structure::interleaved-reads.
#define NUM_BINS 256

extern "C" __global__ void histogram_coarse(const unsigned char *data, unsigned int n, unsigned int *bins)
{
    __shared__ unsigned int bins_s[NUM_BINS];
    for (unsigned int b = threadIdx.x; b < NUM_BINS; b += blockDim.x)
        bins_s[b] = 0u;
    __syncthreads();

    const unsigned int threads = blockDim.x * gridDim.x;
    const unsigned int tid = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned int words = n / 16;
    const unsigned int chunk = (words + threads - 1) / threads;
    const int4 *w = (const int4 *)data;
    for (unsigned int k = tid * chunk; k < min(words, (tid + 1) * chunk); k++) {
        int4 v = w[k];
        unsigned int parts[4] = {(unsigned int)v.x, (unsigned int)v.y, (unsigned int)v.z, (unsigned int)v.w};
        for (int p = 0; p < 4; p++)
            for (int s = 0; s < 32; s += 8)
                atomicAdd(&bins_s[(parts[p] >> s) & 0xffu], 1u);
    }
    for (unsigned int i = words * 16 + tid; i < n; i += threads)
        atomicAdd(&bins_s[data[i]], 1u);
    __syncthreads();

    for (unsigned int b = threadIdx.x; b < NUM_BINS; b += blockDim.x)
        if (bins_s[b] > 0)
            atomicAdd(&bins[b], bins_s[b]);
}
