// ex12, part `tiled`, cheat (jitter): the reference's tile and halo in shared
// memory, but every output summed in double (a fraction of float's rate on
// the GPU: too slow for the timed check), and at the timed size block (0, 0)
// spins a random time on every launch, so that the timed samples spread far
// beyond 10 %. Under the old rule the check left the maximum (7.5 / 7.5); now
// a grader kernel timed in the same rounds stays steady, and the kernel is
// graded by its slow launches.
#define TILE 16
#define MAX_MASK_RADIUS 3
#define IN_TILE_MAX (TILE + 2 * MAX_MASK_RADIUS)
#define TIMED_MIN (4 << 20) // pixels, above every correctness image: the simulator never spins

__constant__ float F[(2 * MAX_MASK_RADIUS + 1) * (2 * MAX_MASK_RADIUS + 1)];

__device__ unsigned jitter_launches;

__device__ void jitter(long long pixels)
{
    if (pixels < TIMED_MIN || blockIdx.x != 0 || blockIdx.y != 0 || threadIdx.x != 0 || threadIdx.y != 0)
        return;
    unsigned h = atomicAdd(&jitter_launches, 1u) * 2654435761u;
    h ^= h >> 15;
    long long spin = (long long)(h % 4) * 20000000LL, t0 = clock64();
    while (clock64() - t0 < spin) {
    }
}

extern "C" __global__ void conv2d_tiled(const float *in, float *out, int r, int width, int height)
{
    __shared__ float tile[IN_TILE_MAX][IN_TILE_MAX];
    jitter((long long)width * height);
    int in_dim = TILE + 2 * r;
    int row0 = blockIdx.y * TILE - r;
    int col0 = blockIdx.x * TILE - r;
    for (int k = threadIdx.y * TILE + threadIdx.x; k < in_dim * in_dim; k += TILE * TILE) {
        int ty = k / in_dim, tx = k % in_dim;
        int y = row0 + ty, x = col0 + tx;
        tile[ty][tx] = (y >= 0 && y < height && x >= 0 && x < width) ? in[y * width + x] : 0.0f;
    }
    __syncthreads();
    int row = blockIdx.y * TILE + threadIdx.y;
    int col = blockIdx.x * TILE + threadIdx.x;
    if (row < height && col < width) {
        int w = 2 * r + 1;
        double sum = 0.0;
        for (int i = 0; i < w; i++)
            for (int j = 0; j < w; j++)
                sum += (double)F[i * w + j] * (double)tile[threadIdx.y + i][threadIdx.x + j];
        out[row * width + col] = (float)sum;
    }
}
