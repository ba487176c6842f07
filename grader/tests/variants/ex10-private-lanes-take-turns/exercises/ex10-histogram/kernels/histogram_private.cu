// Variant (a real mistake that costs nothing on an H100: the merge bounds the kernel): private bins merged once per bin,
// as the lesson asks, but the lanes of each warp count their byte one after
// another, "so that two lanes never hit the same shared bin at once": a loop
// over the 32 lanes around the shared atomic. The atomic already serializes
// only the lanes that collide; the loop makes every warp take 32 turns.
#define NUM_BINS 256

extern "C" __global__ void histogram_private(const unsigned char *data, unsigned int n, unsigned int *bins)
{
    __shared__ unsigned int bins_s[NUM_BINS];
    for (unsigned int b = threadIdx.x; b < NUM_BINS; b += blockDim.x)
        bins_s[b] = 0u;
    __syncthreads();

    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int lane = threadIdx.x % 32;
    for (unsigned int turn = 0; turn < 32; turn++) {
        if (lane == turn && i < n)
            atomicAdd(&bins_s[data[i]], 1u);
        __syncwarp();
    }
    __syncthreads();

    for (unsigned int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) {
        unsigned int count = bins_s[b];
        if (count > 0)
            atomicAdd(&bins[b], count);
    }
}
