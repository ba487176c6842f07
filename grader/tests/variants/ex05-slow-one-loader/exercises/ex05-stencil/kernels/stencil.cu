// Calibration variant for ex05 `stencil`: correct, stages the block's window
// plus halos in shared memory and computes from it after a barrier (so it
// passes the structure check), but one thread per block loads the whole
// window while the other threads wait. The loads are serial and uncoalesced,
// so it must fail `perf::share-of-copy`.
#define BLOCK_SIZE 512
#define RADIUS 3

extern "C" __global__ void stencil_1d(const int *in, int *out, int n)
{
    __shared__ int tmp[BLOCK_SIZE + 2 * RADIUS];
    int base = blockIdx.x * BLOCK_SIZE;
    int padded = n + 2 * RADIUS;

    if (threadIdx.x == 0)
        for (int j = 0; j < BLOCK_SIZE + 2 * RADIUS && base + j < padded; j++)
            tmp[j] = in[base + j];
    __syncthreads();

    int i = base + threadIdx.x;
    if (i < n) {
        int sum = 0;
        for (int k = 0; k <= 2 * RADIUS; k++)
            sum += tmp[threadIdx.x + k];
        out[i] = sum / (2 * RADIUS + 1);
    }
}
