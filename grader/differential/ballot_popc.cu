// __ballot_sync and __popc: how many lanes of my warp hold a positive value,
// and my rank among them (stream compaction's building block).
extern "C" __global__ void k(const int *in_i, const float *in_f, const double *in_d, int *out_i, float *out_f, double *out_d, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    bool pos = i < n && in_i[i] > 0;
    unsigned b = __ballot_sync(0xffffffffu, pos);
    if (i < n) {
        out_i[i] = __popc(b);
        out_f[i] = (float)__popc(b & ((1u << lane) - 1));
        out_d[i] = (double)__ffs(b) + 100.0 * __clz(b);
    }
}
