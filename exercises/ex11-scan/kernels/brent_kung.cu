// ex11, part brent-kung: scan each section of X with a work-efficient scan.
//
// Launch (the grader's): gridDim.x = ceil(n / 1024) blocks of
// blockDim.x = 512 threads. Block b scans the section of SECTION_SIZE =
// 2 * blockDim.x = 1024 elements X[b*1024 .. b*1024+1023] (the last one may be
// shorter) into the same places of Y, as in the kogge-stone part; each thread
// loads and stores two elements.
#define SECTION_SIZE 1024

extern "C" __global__ void brent_kung_scan(const int *X, int *Y, int n) {
    // TODO: load two elements per thread into shared memory, coalesced
    //       (thread t: elements t and t + blockDim.x of the section; 0 past n).
    // TODO: up-sweep: a reduction tree, strides 1, 2, 4, ..., blockDim.x,
    //       a __syncthreads() before each step.
    // TODO: down-sweep: strides SECTION_SIZE / 4, ..., 2, 1, each adding a
    //       partial sum into the element `stride` places after it.
    // TODO: write both elements back (only where they exist).
}
