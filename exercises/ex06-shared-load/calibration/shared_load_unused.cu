// Wrong-technique variant for ex06 (measured checks): copies both vectors into
// the dynamic buffer behind a barrier and reads one byte back, but computes
// from global memory. Correct, spells the technique: must fail `dynamic-shared`
// and the stand-in.
#define SIZE 256

extern "C" __global__ void compute(unsigned int *out, const unsigned char *in1, const unsigned char *in2)
{
    extern __shared__ unsigned char in[];
    unsigned int t = threadIdx.x;
    unsigned int first = blockIdx.x * SIZE;
    in[t] = in1[first + t];
    in[SIZE + t] = in2[first + t];
    __syncthreads();
    unsigned int sum = in[t] - in1[first + t];
    for (unsigned int j = 0; j < SIZE; j++)
        sum += in1[first + j] * in2[first + (j + t) % SIZE];
    out[first + t] = sum;
}
