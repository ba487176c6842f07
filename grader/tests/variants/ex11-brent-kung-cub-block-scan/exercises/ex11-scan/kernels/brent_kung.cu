// Variant (issue 51): the section scanned by CUB's cub::BlockScan. Coalesced
// loads into shared memory, each thread scans its two consecutive elements
// with BlockScan::InclusiveSum, coalesced stores. CUB is the course's to allow
// (cuda-lab.toml `[headers]`); by default it is not: a compile error that names the setting.
#include <cub/block/block_scan.cuh>
#define SECTION_SIZE 1024
#define THREADS 512 // == blockDim.x, fixed by the host

extern "C" __global__ void brent_kung_scan(const int *X, int *Y, int n) {
    typedef cub::BlockScan<int, THREADS> BlockScan;
    __shared__ typename BlockScan::TempStorage temp;
    __shared__ int XY[SECTION_SIZE];
    unsigned int start = 2 * blockIdx.x * blockDim.x;
    unsigned int a = start + threadIdx.x, b = a + blockDim.x;
    XY[threadIdx.x] = a < n ? X[a] : 0;
    XY[threadIdx.x + blockDim.x] = b < n ? X[b] : 0;
    __syncthreads();
    int pair[2] = {XY[2 * threadIdx.x], XY[2 * threadIdx.x + 1]};
    BlockScan(temp).InclusiveSum(pair, pair);
    XY[2 * threadIdx.x] = pair[0];
    XY[2 * threadIdx.x + 1] = pair[1];
    __syncthreads();
    if (a < n) Y[a] = XY[threadIdx.x];
    if (b < n) Y[b] = XY[threadIdx.x + blockDim.x];
}
