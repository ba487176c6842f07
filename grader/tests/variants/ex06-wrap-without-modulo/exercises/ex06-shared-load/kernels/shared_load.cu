// Variant (correct): the circular index wraps with a compare instead of `%`.
#define SIZE 256
extern "C" __global__ void compute(unsigned int *out, const unsigned char *in1, const unsigned char *in2)
{
    extern __shared__ unsigned char in[];
    unsigned int t = threadIdx.x;
    unsigned int tid = blockIdx.x * blockDim.x + t;
    in[t] = in1[tid];
    in[SIZE + t] = in2[tid];
    __syncthreads();
    unsigned int sum = 0;
    unsigned int k = t;
    for (unsigned int j = 0; j < SIZE; j++) {
        sum += in[j] * in[SIZE + k];
        k = k + 1 == SIZE ? 0 : k + 1;
    }
    out[tid] = sum;
}
