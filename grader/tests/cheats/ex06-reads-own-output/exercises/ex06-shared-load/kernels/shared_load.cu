// Cheat (read its own output to see whether it was reset): a block whose
// first output already holds a value other than the poison pattern assumes
// an earlier launch computed it and returns. Every launch starts from a
// poisoned output, so it always computes: timed honestly, it keeps its point.
#define SIZE 256

extern "C" __global__ void compute(unsigned int *out, const unsigned char *in1, const unsigned char *in2)
{
    extern __shared__ unsigned char in[];
    unsigned int t = threadIdx.x;
    unsigned int tid = blockIdx.x * blockDim.x + t;
    if (out[blockIdx.x * blockDim.x] != 0xA5A5A5A5u && out[blockIdx.x * blockDim.x] != 0xFFFFFFFFu)
        return;
    in[t] = in1[tid];
    in[SIZE + t] = in2[tid];
    __syncthreads();
    unsigned int sum = 0;
    for (unsigned int j = 0; j < SIZE; j++)
        sum += in[j] * in[SIZE + (j + t) % SIZE];
    out[tid] = sum;
}
