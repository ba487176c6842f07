// ex01 `global`, variant: the reference with an L2 eviction-priority hint in
// inline PTX (`applypriority`, sm_80 on: it changes what the cache keeps,
// never a value), an instruction the simulator does not run. A GPU grades it
// in full; the simulator must say what it cannot grade, and never fail it.
extern "C" __global__ void pi_global(const float *x, const float *y, int n, unsigned int *hits)
{
    asm volatile("applypriority.global.L2::evict_normal [%0], 128;" ::"l"(x));
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        if (x[i] * x[i] + y[i] * y[i] <= 1.0f)
            atomicAdd(hits, 1u);
    }
}
