// Calibration variant for ex06 `load`: correct, and it uses the dynamic shared
// buffer and a barrier (so it passes the structure check), but every thread
// copies BOTH whole vectors instead of one element of each: SIZE times the
// staging work, all threads writing the same bytes. It must fail
// `perf::faster-than-global-reads`.
#define SIZE 256

extern "C" __global__ void compute(unsigned int *out, const unsigned char *in1, const unsigned char *in2)
{
    extern __shared__ unsigned char in[];
    unsigned int t = threadIdx.x;
    unsigned int first = blockIdx.x * SIZE;

    for (unsigned int j = 0; j < SIZE; j++) {
        in[j] = in1[first + j];
        in[SIZE + j] = in2[first + j];
    }
    __syncthreads();

    unsigned int sum = 0;
    for (unsigned int j = 0; j < SIZE; j++)
        sum += in[j] * in[SIZE + (j + t) % SIZE];
    out[first + t] = sum;
}
