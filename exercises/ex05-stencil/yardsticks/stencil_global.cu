// For comparison only (not graded): the same stencil reading every input
// straight from global memory, 2*RADIUS+1 loads per output. On GPUs with an L1
// cache the neighbours' loads mostly hit in L1, so this is not as slow as the
// textbook says; the grader reports its bandwidth next to the student's.
#define RADIUS 3

extern "C" __global__ void stencil_global(const int *in, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int sum = 0;
#pragma unroll
        for (int k = 0; k <= 2 * RADIUS; k++)
            sum += in[i + k];
        out[i] = sum / (2 * RADIUS + 1);
    }
}
