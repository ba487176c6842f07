// Variant: off by one while staging in2 (`t < SIZE - 1`): the last byte of the
// second half is never written, and every thread reads it once.
#define SIZE 256
extern "C" __global__ void compute(unsigned int *out, const unsigned char *in1, const unsigned char *in2)
{
    extern __shared__ unsigned char in[];
    unsigned int t = threadIdx.x;
    unsigned int tid = blockIdx.x * blockDim.x + t;
    in[t] = in1[tid];
    if (t < SIZE - 1)
        in[SIZE + t] = in2[tid];
    __syncthreads();
    unsigned int sum = 0;
    for (unsigned int j = 0; j < SIZE; j++)
        sum += in[j] * in[SIZE + (j + t) % SIZE];
    out[tid] = sum;
}
