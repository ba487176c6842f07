// A product read once, by a sum, where the PTX spells no rounding: the PTX ISA
// lets ptxas fuse the pair into one fused multiply-add (one rounding). Half
// precision through cuda_fp16.h (`mul.f16`, `add.f16`), and float and double
// written as PTX (NVRTC itself fuses `x * y + z` in C, so its PTX never holds
// the pair). What the GPU does here is what the simulator must do.
// NEEDS cuda_fp16.h among the compiler's in-memory headers.
#include <cuda_fp16.h>
extern "C" __global__ void k(const int *in_i, const float *in_f, const double *in_d, int *out_i, float *out_f, double *out_d, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float x = in_f[i], y = in_f[(i + 7) % n] * 3.0f, z = in_f[(i + 13) % n];
    __half h = __hadd(__hmul(__float2half(x), __float2half(y)), __float2half(z));
    float f;
    asm("{ .reg .f32 t; mul.f32 t, %1, %2; add.f32 %0, t, %3; }" : "=f"(f) : "f"(x), "f"(y), "f"(z));
    double dx = in_d[i], dy = in_d[(i + 7) % n] * (1.0 / 3.0), dz = in_d[(i + 13) % n], d;
    asm("{ .reg .f64 t; mul.f64 t, %1, %2; add.f64 %0, t, %3; }" : "=d"(d) : "d"(dx), "d"(dy), "d"(dz));
    out_i[i] = (int)__half_as_ushort(h);
    out_f[i] = f;
    out_d[i] = d;
}
