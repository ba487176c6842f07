// ex11, part kogge-stone: scan each section of X with Kogge-Stone.
//
// Launch (the grader's): gridDim.x = ceil(n / 1024) blocks of
// blockDim.x = SECTION_SIZE = 1024 threads. Block b scans the section
// X[b*1024 .. b*1024+1023] (the last section may be shorter: n need not be a
// multiple of 1024) and writes its inclusive scan to the same places of Y:
//   Y[b*1024 + j] = X[b*1024] + X[b*1024 + 1] + ... + X[b*1024 + j].
// Every section starts again from 0: the sections are independent.
#define SECTION_SIZE 1024

extern "C" __global__ void kogge_stone_scan(const int *X, int *Y, int n) {
    // TODO: load your element into shared memory (0 past the end of X).
    // TODO: log2(SECTION_SIZE) steps; at step `stride`, element t becomes
    //       itself + the element `stride` places before it (when there is one).
    //       Read one shared array and write another, swapping them after each
    //       step, with one __syncthreads() per step (README: why one is enough).
    // TODO: write your element of the scan to Y (only where it exists).
}
