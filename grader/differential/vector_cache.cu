// Vector types and cache-hinted loads and stores: int4/float4/float2/double2,
// __ldg/__ldcg/__ldca/__ldcs/__ldlu/__ldcv, __stcg/__stcs/__stwb/__stwt,
// __nanosleep and __activemask. Clang 22's CUDA headers lack __ldca, __ldlu,
// __stcg, __stcs and __stwb: there they are plain loads and stores.
#if defined(__clang__)
#define __ldca(p) (*(p))
#define __ldlu(p) (*(p))
#define __stcg(p, v) (*(p) = (v))
#define __stcs(p, v) (*(p) = (v))
#define __stwb(p, v) (*(p) = (v))
#endif
extern "C" __global__ void k(const int *in_i, const float *in_f, const double *in_d, int *out_i, float *out_f, double *out_d, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int q = i * 4;
    if (q + 3 < n) {
        int4 a = __ldg(reinterpret_cast<const int4 *>(in_i) + i);
        float4 b = __ldcg(reinterpret_cast<const float4 *>(in_f) + i);
        float2 c = __ldca(reinterpret_cast<const float2 *>(in_f) + 2 * i);
        double2 d = __ldcs(reinterpret_cast<const double2 *>(in_d) + 2 * i);
        int e = __ldlu(in_i + q) + __ldcv(in_i + q + 1);
        __stcg(reinterpret_cast<int4 *>(out_i) + i, make_int4(a.w + e, a.z, a.y, a.x));
        __stcs(reinterpret_cast<float4 *>(out_f) + i, make_float4(b.x + c.y, b.y * 2.0f, b.z - c.x, b.w));
        __stwb(reinterpret_cast<double2 *>(out_d) + 2 * i, make_double2(d.y, d.x));
        __stwt(reinterpret_cast<double2 *>(out_d) + 2 * i + 1, make_double2((double)__popc(__activemask()), 0.5));
    }
    __nanosleep(100);
}
