// ex06 `load`, reference solution.
//
// Block b owns the pair in1[b*SIZE ..], in2[b*SIZE ..] and the outputs
// out[b*SIZE ..]. Each thread stages one byte of each vector into the dynamic
// shared buffer (in1 in the first half, in2 in the second), then computes one
// lag of the circular cross-correlation from shared memory: 2*SIZE shared
// reads per thread, against 2 global reads to stage.
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
    for (unsigned int j = 0; j < SIZE; j++)
        sum += in[j] * in[SIZE + (j + t) % SIZE];
    out[tid] = sum;
}
