// Slow variant, a real mistake: staged as the notes ask (one element of each
// vector per thread, then __syncthreads()), but with a __syncthreads() "to be
// safe" inside the loop over the 256 products, though nothing is written to
// shared memory after the staging. Right results and 2 global loads per
// thread; every step now waits for the block's 8 warps, and the compiler can
// no longer unroll and overlap the shared reads of several steps.
#define SIZE 256

extern "C" __global__ void compute(unsigned int *out, const unsigned char *in1, const unsigned char *in2)
{
    extern __shared__ unsigned char in[];
    unsigned int t = threadIdx.x;
    unsigned int tid = blockIdx.x * blockDim.x + t;

    in[t] = in1[tid];
    in[SIZE + t] = in2[tid];
    __syncthreads();

    unsigned int sum = 0;
    for (unsigned int j = 0; j < SIZE; j++) {
        sum += in[j] * in[SIZE + (j + t) % SIZE];
        __syncthreads();
    }
    out[tid] = sum;
}
