// atomicInc wraps at a limit, atomicDec too; the final values do not depend on
// the order. A shared-memory histogram with atomicAdd, copied out per block.
extern "C" __global__ void k(const int *in_i, const float *in_f, const double *in_d, int *out_i, float *out_f, double *out_d, int n)
{
    __shared__ int hist[16];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x < 16)
        hist[threadIdx.x] = 0;
    __syncthreads();
    if (i < n) {
        atomicInc((unsigned *)&out_i[0], 37u);
        atomicDec((unsigned *)&out_i[1], 11u);
        atomicAdd(&hist[(in_i[i] + 1000) & 15], 1);
        atomicMax(&out_i[2], in_i[i]);
        atomicMin(&out_i[3], in_i[i]);
        atomicOr(&out_i[4], 1 << (in_i[i] & 31));
        atomicXor(&out_i[5], in_i[i]);
    }
    __syncthreads();
    if (threadIdx.x < 16)
        atomicAdd(&out_i[16 + threadIdx.x], hist[threadIdx.x]);
}
