// ex06 with the dynamic buffer carved into two arrays by pointer arithmetic,
// one per vector: v1 = the first blockDim.x bytes, v2 = the next. Correct: both
// stay inside the dynamic size the host gives (2 * SIZE bytes).
#define SIZE 256

extern "C" __global__ void compute(unsigned int *out, const unsigned char *in1, const unsigned char *in2)
{
    extern __shared__ unsigned char smem[];
    unsigned char *v1 = smem;
    unsigned char *v2 = smem + blockDim.x;
    unsigned int t = threadIdx.x;
    unsigned int tid = blockIdx.x * blockDim.x + t;

    v1[t] = in1[tid];
    v2[t] = in2[tid];
    __syncthreads();

    unsigned int sum = 0;
    for (unsigned int j = 0; j < SIZE; j++)
        sum += v1[j] * v2[(j + t) % SIZE];
    out[tid] = sum;
}
