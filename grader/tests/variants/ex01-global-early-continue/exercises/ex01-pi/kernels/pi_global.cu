// Variant: a grid-stride for loop that skips misses with `continue` and adds
// each hit with atomicAdd: correct and coalesced, its branch in
// the loop lets the lanes drift apart under clang.
extern "C" __global__ void pi_global(const float *__restrict__ x, const float *__restrict__ y, int n,
                                     unsigned int *hits)
{
    for (int i = threadIdx.x + blockIdx.x * blockDim.x; i < n; i += blockDim.x * gridDim.x) {
        float d = x[i] * x[i] + y[i] * y[i];
        if (d > 1.0f)
            continue;
        atomicAdd(hits, 1u);
    }
}
