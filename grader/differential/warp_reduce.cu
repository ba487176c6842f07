// Warp reductions: a shuffle tree (int and float, fixed order) and the sm_80
// __reduce_*_sync instructions, plus __match_any_sync and __shfl_sync/up/xor.
extern "C" __global__ void k(const int *in_i, const float *in_f, const double *in_d, int *out_i, float *out_f, double *out_d, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? in_i[i] : 0;
    float f = i < n ? in_f[i] : 0.0f;
    int s = v;
    for (int o = 16; o > 0; o >>= 1) {
        s += __shfl_down_sync(0xffffffffu, s, o);
        f += __shfl_xor_sync(0xffffffffu, f, o);
    }
    unsigned u = (unsigned)(v + 1000);
    unsigned radd = __reduce_add_sync(0xffffffffu, u);
    unsigned rmin = __reduce_min_sync(0xffffffffu, u);
    int rmax = __reduce_max_sync(0xffffffffu, v);
    unsigned rand_ = __reduce_and_sync(0xffffffffu, u | 0x400u);
    unsigned ror = __reduce_or_sync(0xffffffffu, u);
    unsigned rxor = __reduce_xor_sync(0xffffffffu, u);
    unsigned m = __match_any_sync(0xffffffffu, v & 3);
    int up = __shfl_up_sync(0xffffffffu, v, 3);
    int idx = __shfl_sync(0xffffffffu, v, (threadIdx.x * 7) & 31);
    if (i < n) {
        out_i[i] = s + (int)radd + (int)rmin * 3 + rmax * 5 + (int)(rand_ ^ ror ^ rxor) + (int)m + up + idx;
        out_f[i] = f;
        out_d[i] = (double)__popc(m);
    }
}
