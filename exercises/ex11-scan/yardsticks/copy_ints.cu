// The grader's yardstick for ex11's timed checks: a copy of the same n ints
// the scan reads and writes, one per thread, coalesced.
extern "C" __global__ void copy_ints(const int *__restrict__ in, int *__restrict__ out, int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i];
}
