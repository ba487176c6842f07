// Style variant for ex01 `global` (measured checks): each warp counts its hits
// with a ballot and one lane adds them to the global counter. Correct, global
// atomics: must pass `global-atomics`.
extern "C" __global__ void pi_global(const float *x, const float *y, int n, unsigned int *hits)
{
    for (int base = blockIdx.x * blockDim.x; base < n; base += gridDim.x * blockDim.x) {
        int i = base + threadIdx.x;
        bool hit = i < n && x[i] * x[i] + y[i] * y[i] <= 1.0f;
        unsigned int votes = __ballot_sync(0xffffffffu, hit);
        if ((threadIdx.x & 31) == 0 && votes)
            atomicAdd(hits, __popc(votes));
    }
}
