// Inline asm a hostile student might write: text that is not valid PTX,
// endless loops, unknown instructions, huge immediates, odd directives.
extern "C" __global__ void asm_garbage(int *out)
{
    asm volatile("// }}}} .entry evil( ) { ret; }");
    asm volatile("this is not ptx at all;");
    out[0] = 1;
}

extern "C" __global__ void asm_spin(int *out)
{
    asm volatile("SPIN_%=: bra SPIN_%=;");
    out[0] = 1;
}

extern "C" __global__ void asm_odd(int *out)
{
    int v;
    asm volatile("mov.b32 %0, 0xffffffffffffffffff;" : "=r"(v));
    asm volatile(".pragma \"nounroll\";");
    asm volatile("trap;");
    asm volatile("brkpt;");
    asm volatile("exit;");
    out[0] = v;
}

extern "C" __global__ void asm_vector(float4 *out)
{
    float a, b, c, d;
    asm volatile("ld.global.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(a), "=f"(b), "=f"(c), "=f"(d) : "l"(out));
    asm volatile("shfl.sync.bfly.b32 %0, %0, 16, 31, 0xffffffff;" : "+f"(a));
    asm volatile("vote.sync.ballot.b32 %0, 1, 0xffffffff;" : "=f"(b));
    out[threadIdx.x] = make_float4(a, b, c, d);
}
