// Inline PTX of the kinds students write: NVRTC copies each asm block's text
// into the PTX untouched, so whatever is inside reaches ptx-sim's parser.
extern "C" __global__ void asm_add(const int *a, const int *b, int *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int r;
        asm("add.s32 %0, %1, %2;" : "=r"(r) : "r"(a[i]), "r"(b[i]));
        c[i] = r;
    }
}

extern "C" __global__ void asm_scoped(int *out)
{
    unsigned int lane;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
    int v;
    asm volatile("{\n\t.reg .pred p;\n\tsetp.eq.u32 p, %1, 0;\n\tselp.s32 %0, 1, 2, p;\n\t}" : "=r"(v) : "r"(lane));
    out[threadIdx.x] = v;
}

extern "C" __global__ void asm_memory(float *x)
{
    float v;
    asm volatile("ld.global.f32 %0, [%1];" : "=f"(v) : "l"(x + threadIdx.x));
    asm volatile("st.global.f32 [%0], %1;" :: "l"(x + threadIdx.x), "f"(v * 2.0f) : "memory");
    asm volatile("bar.sync 0;");
    asm volatile("membar.gl;" ::: "memory");
}

extern "C" __global__ void asm_shared(int *out)
{
    __shared__ int s[64];
    int r;
    asm volatile("st.shared.s32 [%0], %1;" :: "r"((unsigned)(size_t)&s[threadIdx.x % 64]), "r"((int)threadIdx.x));
    __syncthreads();
    asm volatile("atom.shared.add.s32 %0, [%1], 1;" : "=r"(r) : "r"((unsigned)(size_t)&s[0]));
    out[threadIdx.x] = r;
}

extern "C" __global__ void asm_loop(int *out, int n)
{
    int acc = 0;
    asm volatile(
        "{\n"
        "  .reg .s32 k;\n"
        "  .reg .pred q;\n"
        "  mov.s32 k, 0;\n"
        "LOOP_%=:\n"
        "  add.s32 %0, %0, k;\n"
        "  add.s32 k, k, 1;\n"
        "  setp.lt.s32 q, k, %1;\n"
        "  @q bra LOOP_%=;\n"
        "}"
        : "+r"(acc) : "r"(n));
    out[threadIdx.x] = acc;
}
