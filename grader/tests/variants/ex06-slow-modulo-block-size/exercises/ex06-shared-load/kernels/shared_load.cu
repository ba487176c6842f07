// Variant (slow, a real mistake): the circular index wraps with
// `% blockDim.x` (the vector's length is the block's size) instead of the
// compile-time SIZE. The result is the same, but the compiler no longer knows
// the divisor is 256: each of the 256 steps pays a run-time unsigned modulo
// (a multiply-high and a correction) where `% 256` is one AND.
#define SIZE 256

extern "C" __global__ void compute(unsigned int *out, const unsigned char *in1, const unsigned char *in2)
{
    extern __shared__ unsigned char in[];
    unsigned int t = threadIdx.x;
    unsigned int tid = blockIdx.x * blockDim.x + t;

    in[t] = in1[tid];
    in[blockDim.x + t] = in2[tid];
    __syncthreads();

    unsigned int sum = 0;
    for (unsigned int j = 0; j < blockDim.x; j++)
        sum += in[j] * in[blockDim.x + (j + t) % blockDim.x];
    out[tid] = sum;
}
