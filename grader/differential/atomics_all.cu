// Atomics of every type whose final value does not depend on the order:
// add on int/unsigned long long/float/double/half2, CAS loops on 32 and 64 bits,
// max/min/and/or/xor on 32 and 64 bits, inc/dec, sub, and exch of one value.
#include <cuda_fp16.h>
extern "C" __global__ void k(const int *in_i, const float *in_f, const double *in_d, int *out_i, float *out_f, double *out_d, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int v = in_i[i];
    int slot = i % 16;
    atomicAdd(&out_i[slot], v);
    atomicSub(&out_i[16 + slot], v);
    atomicMax(&out_i[32 + slot], v);
    atomicMin(&out_i[48 + slot], v);
    atomicAnd(&out_i[64 + slot], v | 0x0f0);
    atomicOr(&out_i[80 + slot], v & 0x3ff);
    atomicXor(&out_i[96 + slot], v);
    atomicInc((unsigned *)&out_i[112 + slot], 1000000u);
    atomicDec((unsigned *)&out_i[128 + slot], 1000000u);
    atomicExch(&out_i[144 + slot], 42);
    // a CAS loop that adds (32 bits)
    int *p = &out_i[160 + slot];
    int old = *p, assumed;
    do {
        assumed = old;
        old = atomicCAS(p, assumed, assumed + v);
    } while (old != assumed);
    // 64-bit: add, max, min, and, or, xor, CAS loop
    unsigned long long *q = (unsigned long long *)&out_d[0];
    atomicAdd(&q[slot], (unsigned long long)(v + 1000));
    atomicMax((long long *)&q[16 + slot], (long long)v * 100000);
    atomicMin((long long *)&q[32 + slot], (long long)v * 100000);
    atomicAnd(&q[48 + slot], (unsigned long long)(v + 1000) | 0xff00ull);
    atomicOr(&q[64 + slot], (unsigned long long)(v + 1000) << 20);
    atomicXor(&q[80 + slot], (unsigned long long)(v + 1000) << 8);
    unsigned long long *c = &q[96 + slot];
    unsigned long long o = *c, a;
    do {
        a = o;
        o = atomicCAS(c, a, a + (unsigned long long)(v + 1000));
    } while (o != a);
    atomicAdd(&out_d[112 + slot], in_d[i]);
    // floats: exact sums of multiples of 1/1024 in double; a max of floats
    atomicAdd(&out_f[slot], (float)v);
    atomicMax((unsigned *)&out_i[176 + slot], (unsigned)(v + 1000));
    __half2 h = __floats2half2_rn((float)(v & 7), (float)(v & 3));
    atomicAdd((__half2 *)&out_f[16 + slot], h);
}
