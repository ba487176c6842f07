// The coalescing lab of the notes (seed 000): each thread adds 1 to one float,
// at an offset from its index or at a multiple (stride) of it. The buffer holds
// 33 * n floats so the largest offset and stride stay inside it.
extern "C" __global__ void offset_copy(float *a, int s)
{
    unsigned long long i = (unsigned long long)blockDim.x * blockIdx.x + threadIdx.x + s;
    a[i] = a[i] + 1.0f;
}

extern "C" __global__ void stride_copy(float *a, int s)
{
    unsigned long long i = ((unsigned long long)blockDim.x * blockIdx.x + threadIdx.x) * s;
    a[i] = a[i] + 1.0f;
}
