// Bit intrinsics: __popc/__popcll, __clz/__clzll, __ffs/__ffsll, __brev/__brevll,
// __byte_perm, __funnelshift_l/r/lc/rc, __umulhi, __mul64hi, __sad, __hadd, __rhadd.
extern "C" __global__ void k(const int *in_i, const float *in_f, const double *in_d, int *out_i, float *out_f, double *out_d, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned x = (unsigned)in_i[i] * 2654435761u;
    unsigned y = (unsigned)in_i[(i + 1) % n] * 40503u + 7u;
    unsigned long long w = ((unsigned long long)x << 32) | y;
    int r = __popc(x) + 3 * __clz(y) + 5 * __ffs(x) + 7 * (int)(__brev(x) & 0xff) + (int)__byte_perm(x, y, 0x5140);
    r ^= (int)__funnelshift_l(x, y, i & 63) + (int)__funnelshift_r(x, y, i & 63);
    r ^= (int)__funnelshift_lc(x, y, i & 63) - (int)__funnelshift_rc(x, y, i & 63);
    r += (int)__umulhi(x, y) + __sad(in_i[i], 17, 3u) + __hadd(in_i[i], 999) + __rhadd(in_i[i], -5);
    long long s = __popcll(w) + __clzll(w >> (i & 31)) + __ffsll((long long)w) + (long long)(__brevll(w) >> 40) +
                  (long long)(__mul64hi((long long)w, 0x123456789LL) & 0xffff);
    out_i[i] = r;
    out_f[i] = (float)(s & 0xffff);
    out_d[i] = (double)(long long)(__umul64hi(w, 0x9e3779b97f4a7c15ull) >> 20);
}
