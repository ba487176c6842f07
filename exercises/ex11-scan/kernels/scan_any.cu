// ex11, part any-n: an inclusive scan of any length n (README: the launches).
//
// The grader's host code launches, in this order:
//   1. scan_sections(in, out, sums, n): one block of 512 threads per section of
//      SECTION_SIZE = 1024 elements (gridDim.x = ceil(n / 1024));
//   2. when there is more than one section: the same scan (steps 1 to 3) on
//      `sums`, into `scanned_sums`;
//   3. then add_sums(out, scanned_sums, n), with the launch of step 1.
// Afterwards out[i] = in[0] + in[1] + ... + in[i] for every i < n.
#define SECTION_SIZE 1024

extern "C" __global__ void scan_sections(const int *in, int *out, int *sums, int n) {
    // TODO: scan section blockIdx.x of `in` into `out` (the brent-kung part's
    //       kernel, or your own), 0 past the end of `in`;
    // TODO: and write the section's total to sums[blockIdx.x].
}

extern "C" __global__ void add_sums(int *out, const int *scanned_sums, int n) {
    // TODO: scanned_sums[b] is the sum of sections 0..b: add the total of
    //       every section before this one to each element of this section
    //       that exists (section 0 has nothing before it).
}
