// Variant (correct): the circular loop split in two straight runs, through
// pointers into the two halves of the buffer.
#define SIZE 256
extern "C" __global__ void compute(unsigned int *out, const unsigned char *in1, const unsigned char *in2)
{
    extern __shared__ unsigned char in[];
    unsigned int t = threadIdx.x;
    unsigned int tid = blockIdx.x * blockDim.x + t;
    in[t] = in1[tid];
    in[SIZE + t] = in2[tid];
    __syncthreads();
    const unsigned char *a = in, *b = in + SIZE;
    unsigned int sum = 0;
    for (unsigned int j = 0; j < SIZE - t; j++)
        sum += a[j] * b[j + t];
    for (unsigned int j = SIZE - t; j < SIZE; j++)
        sum += a[j] * b[j + t - SIZE];
    out[tid] = sum;
}
