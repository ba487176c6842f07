// Warp intrinsics: __shfl_sync with width, __shfl_up/down/xor_sync, __ballot_sync,
// __all_sync/__any_sync/__uni_sync, __match_any_sync/__match_all_sync,
// __reduce_add/min/max_sync, __syncwarp, __activemask, %laneid via inline asm.
extern "C" __global__ void k(const int *in_i, const float *in_f, const double *in_d, int *out_i, float *out_f, double *out_d, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? in_i[i] : 0;
    double d = i < n ? in_d[i] : 0.0;
    unsigned lane;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    int a = __shfl_sync(0xffffffffu, v, 3, 8);
    int b = __shfl_up_sync(0xffffffffu, v, 2, 16);
    int c = __shfl_down_sync(0xffffffffu, v, 5, 16);
    int x = __shfl_xor_sync(0xffffffffu, v, 9);
    double dd = __shfl_xor_sync(0xffffffffu, d, 1);
    unsigned bal = __ballot_sync(0xffffffffu, v > 0);
    int all = __all_sync(0xffffffffu, v > -2000);
    int any = __any_sync(0xffffffffu, v > 900);
    int uni = __uni_sync(0xffffffffu, v > -2000);
    unsigned ma = __match_any_sync(0xffffffffu, v & 7);
    int pred;
    unsigned ml = __match_all_sync(0xffffffffu, v > -2000, &pred);
    unsigned rs = __reduce_add_sync(0xffffffffu, (unsigned)(v + 1000));
    __syncwarp();
    unsigned am = __activemask();
    if (i < n) {
        out_i[i] = a + 2 * b + 3 * c + 5 * x + (int)__popc(bal) * 7 + all + any * 2 + uni * 4 + (int)__popc(ma) +
                   (int)(ml != 0) + pred + (int)rs + (int)__popc(am) + (int)lane;
        out_f[i] = (float)lane;
        out_d[i] = dd;
    }
}
