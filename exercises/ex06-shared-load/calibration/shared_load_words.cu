// Style variant for ex06 (measured checks): the first 64 threads stage both
// vectors as 4-byte words (one word of each), then everyone computes from the
// buffer with pointers. Correct and staged once: must pass `dynamic-shared`
// and the `faster-than-global-reads` stand-in.
#define SIZE 256

extern "C" __global__ void compute(unsigned int *out, const unsigned char *in1, const unsigned char *in2)
{
    extern __shared__ unsigned char in[];
    unsigned int t = threadIdx.x;
    unsigned int first = blockIdx.x * SIZE;
    if (t < SIZE / 4) {
        ((unsigned int *)in)[t] = ((const unsigned int *)(in1 + first))[t];
        ((unsigned int *)(in + SIZE))[t] = ((const unsigned int *)(in2 + first))[t];
    }
    __syncthreads();
    const unsigned char *a = in, *b = in + SIZE;
    unsigned int sum = 0;
    for (unsigned int j = 0; j < SIZE; j++)
        sum += a[j] * b[(j + t) & (SIZE - 1)];
    out[first + t] = sum;
}
