// The grader's check of ex11's timed outputs, every element, on the device,
// without scanning again: `out` is the inclusive scan of `in` exactly when
//   out[i] == in[i]                 where a scan starts (every `restart`-th element), and
//   out[i] - out[i - 1] == in[i]    everywhere else,
// in the wrapping arithmetic of an int (unsigned here, where wrapping is
// defined). With `sum_count` > 0 it also checks the section totals sums[b] of
// any-n's scan_sections: out[last of section b] - out[last of section b - 1].
//
// Each wrong place lowers *first (set to ~0 by the host): element i as i,
// sums[b] as n + b, so that a wrong element is named before a wrong sum.
// Reads `in` once and `out` about once (out[i - 1] is the neighbour's load):
// as fast as a copy.
#define SECTION_SIZE 1024

extern "C" __global__ void scan_check(const int *in, const int *out, unsigned int n, unsigned int restart,
                                      const int *sums, unsigned int sum_count, unsigned long long *first)
{
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned int expected = (unsigned int)in[i];
        if (i % restart != 0)
            expected += (unsigned int)out[i - 1];
        if ((unsigned int)out[i] != expected)
            atomicMin(first, i);
    }
    if (i < sum_count) {
        unsigned long long end = (i + 1) * SECTION_SIZE < n ? (i + 1) * SECTION_SIZE : n;
        unsigned int total = (unsigned int)out[end - 1];
        if (i > 0)
            total -= (unsigned int)out[i * SECTION_SIZE - 1];
        if ((unsigned int)sums[i] != total)
            atomicMin(first, n + i);
    }
}
