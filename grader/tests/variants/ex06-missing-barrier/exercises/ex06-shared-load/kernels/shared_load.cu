// Variant: no barrier between staging and reading the shared buffer.
#define SIZE 256
extern "C" __global__ void compute(unsigned int *out, const unsigned char *in1, const unsigned char *in2)
{
    extern __shared__ unsigned char in[];
    unsigned int t = threadIdx.x;
    unsigned int tid = blockIdx.x * blockDim.x + t;
    in[t] = in1[tid];
    in[SIZE + t] = in2[tid];
    unsigned int sum = 0;
    for (unsigned int j = 0; j < SIZE; j++)
        sum += in[j] * in[SIZE + (j + t) % SIZE];
    out[tid] = sum;
}
