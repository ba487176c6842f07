// hostile/ex06-shared-over-limit: the reference plus a 48 KiB static scratch
// array; with the 512 dynamic bytes of the launch a block asks for more than
// 48 KiB, so the launch cannot start.
#define SIZE 256

extern "C" __global__ void compute(unsigned int *out, const unsigned char *in1, const unsigned char *in2)
{
    extern __shared__ unsigned char in[];
    __shared__ unsigned int scratch[12288];
    unsigned int t = threadIdx.x;
    unsigned int tid = blockIdx.x * blockDim.x + t;

    in[t] = in1[tid];
    in[SIZE + t] = in2[tid];
    scratch[t * 48] = t;
    __syncthreads();

    unsigned int sum = scratch[((t + 1) % SIZE) * 48] - ((t + 1) % SIZE);
    for (unsigned int j = 0; j < SIZE; j++)
        sum += in[j] * in[SIZE + (j + t) % SIZE];
    out[tid] = sum;
}
