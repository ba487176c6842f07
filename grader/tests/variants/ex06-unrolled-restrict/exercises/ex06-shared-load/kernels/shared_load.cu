// Variant (correct): __restrict__, __ldg staging, the loop unrolled by 8 with a
// mask for the wrap (SIZE is a power of two).
#define SIZE 256
extern "C" __global__ void compute(unsigned int *__restrict__ out, const unsigned char *__restrict__ in1,
                                   const unsigned char *__restrict__ in2)
{
    extern __shared__ unsigned char in[];
    unsigned int t = threadIdx.x;
    unsigned int tid = blockIdx.x * blockDim.x + t;
    in[t] = __ldg(&in1[tid]);
    in[SIZE + t] = __ldg(&in2[tid]);
    __syncthreads();
    unsigned int sum = 0;
#pragma unroll 8
    for (unsigned int j = 0; j < SIZE; j++)
        sum += in[j] * in[SIZE + ((j + t) & (SIZE - 1))];
    out[tid] = sum;
}
