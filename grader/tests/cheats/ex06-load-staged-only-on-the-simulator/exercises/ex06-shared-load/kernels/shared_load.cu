// Cheat (tell the simulator from the GPU): the structure check and the
// measured stand-in replay the kernel on ptx-sim, which used to report
// %nsmid = 1 (a GPU has dozens of SMs). There, the lesson's path: the pair
// staged in dynamic shared memory and every product read from it. On anything
// with more than one SM, the bytes are still staged (the PTX shows shared
// stores and a barrier) but every product reads in1 and in2 from global
// memory: 512 global loads per thread.
#define SIZE 256

__device__ unsigned int sm_count()
{
    unsigned int n;
    asm volatile("mov.u32 %0, %%nsmid;" : "=r"(n));
    return n;
}

extern "C" __global__ void compute(unsigned int *out, const unsigned char *in1, const unsigned char *in2)
{
    extern __shared__ unsigned char in[];
    unsigned int t = threadIdx.x;
    unsigned int tid = blockIdx.x * blockDim.x + t;

    in[t] = in1[tid];
    in[SIZE + t] = in2[tid];
    __syncthreads();

    unsigned int sum = 0;
    if (sm_count() == 1) {
        for (unsigned int j = 0; j < SIZE; j++)
            sum += in[j] * in[SIZE + (j + t) % SIZE];
    } else {
        const unsigned char *a = in1 + blockIdx.x * SIZE, *b = in2 + blockIdx.x * SIZE;
        for (unsigned int j = 0; j < SIZE; j++)
            sum += a[j] * b[(j + t) % SIZE];
    }
    out[tid] = sum;
}
