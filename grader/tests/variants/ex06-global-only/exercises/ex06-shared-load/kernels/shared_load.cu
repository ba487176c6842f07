// Variant: global where shared was asked. The correlation reads in1 and in2
// straight from global memory (512 global reads per thread); no shared buffer.
#define SIZE 256
extern "C" __global__ void compute(unsigned int *out, const unsigned char *in1, const unsigned char *in2)
{
    unsigned int t = threadIdx.x;
    unsigned int b = blockIdx.x * SIZE;
    unsigned int sum = 0;
    for (unsigned int j = 0; j < SIZE; j++)
        sum += in1[b + j] * in2[b + (j + t) % SIZE];
    out[b + t] = sum;
}
