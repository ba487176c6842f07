// Early return, 64-bit index, the doubling as an addition through a pointer.
extern "C" __global__ void PictureKernel(const float *d_Pin, float *d_Pout, int n, int m)
{
    unsigned x = blockIdx.x * 16u + threadIdx.x;
    unsigned y = blockIdx.y * 16u + threadIdx.y;
    if (x >= (unsigned)n || y >= (unsigned)m)
        return;
    size_t i = (size_t)y * (size_t)n + x;
    const float *p = d_Pin + i;
    d_Pout[i] = *p + *p;
}
