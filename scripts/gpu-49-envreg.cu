// Issue 49, on a GPU machine: what a kernel reads from the registers the driver
// sets (%envreg0..31) and the performance monitors (%pm0..7, %pm0_64..7_64),
// which ptx-sim shows as 0 (ptx-sim/src/compile/registers.rs). Where the GPU
// reads something else there, a kernel can tell the simulator by them.
//   nvcc -O3 -arch=sm_90 -o /tmp/envreg scripts/gpu-49-envreg.cu && /tmp/envreg
// Prints each register's value in two blocks' first and last threads of two
// launches (does it vary by block, thread or launch?).
#include <cstdio>
#include <cstdlib>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)

#define ENV(i) asm volatile("mov.u32 %0, %%envreg" #i ";" : "=r"(v[i]))
#define PM(i) asm volatile("mov.u32 %0, %%pm" #i ";" : "=r"(v[32 + i]))
#define PM64(i) asm volatile("mov.u64 %0, %%pm" #i "_64;" : "=l"(w[i]))

constexpr int REGS = 32 + 8 + 8;

__global__ void probe(unsigned long long *out) {
    unsigned v[40];
    unsigned long long w[8];
    ENV(0); ENV(1); ENV(2); ENV(3); ENV(4); ENV(5); ENV(6); ENV(7);
    ENV(8); ENV(9); ENV(10); ENV(11); ENV(12); ENV(13); ENV(14); ENV(15);
    ENV(16); ENV(17); ENV(18); ENV(19); ENV(20); ENV(21); ENV(22); ENV(23);
    ENV(24); ENV(25); ENV(26); ENV(27); ENV(28); ENV(29); ENV(30); ENV(31);
    PM(0); PM(1); PM(2); PM(3); PM(4); PM(5); PM(6); PM(7);
    PM64(0); PM64(1); PM64(2); PM64(3); PM64(4); PM64(5); PM64(6); PM64(7);
    bool first = threadIdx.x == 0, last = threadIdx.x == blockDim.x - 1;
    if ((first || last) && blockIdx.x < 2) {
        unsigned long long *o = out + (blockIdx.x * 2 + (last ? 1 : 0)) * REGS;
        for (int i = 0; i < 40; i++) o[i] = v[i];
        for (int i = 0; i < 8; i++) o[40 + i] = w[i];
    }
}

int main() {
    unsigned long long *d, h[2][4 * REGS];
    CK(cudaMalloc(&d, sizeof h[0]));
    for (int run = 0; run < 2; run++) {
        probe<<<264, 256>>>(d);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(h[run], d, sizeof h[0], cudaMemcpyDeviceToHost));
    }
    printf("register: launch 1 (block 0 thread 0, block 0 last, block 1 thread 0, block 1 last) | launch 2\n");
    for (int i = 0; i < REGS; i++) {
        if (i < 32) printf("%%envreg%d:", i);
        else if (i < 40) printf("%%pm%d:", i - 32);
        else printf("%%pm%d_64:", i - 40);
        for (int run = 0; run < 2; run++) {
            for (int t = 0; t < 4; t++) printf(" %llx", h[run][t * REGS + i]);
            if (run == 0) printf(" |");
        }
        printf("\n");
    }
    return 0;
}
