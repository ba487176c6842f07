// Control flow, warp synchronisation, race detection corner cases, 3D launches.
extern "C" __global__ void divergent_loops(const int *in, int *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[i];
    int s = 0;
    for (int k = 0; k < (v & 7); ++k) {
        if (k & 1)
            s += k;
        else
            s -= 1;
        if (s > 5)
            break;
    }
    s += __shfl_xor_sync(0xffffffffu, s, 1);
    out[i] = s;
}

extern "C" __global__ void partial_shuffle(int *out)
{
    int v = threadIdx.x;
    if (threadIdx.x < 16)
        v = __shfl_sync(0xffffffffu, v, 20); // lanes 16..31 never get here
    __syncthreads();
    out[threadIdx.x] = v;
}

extern "C" __global__ void warp_shared(int *out, int use_syncwarp)
{
    __shared__ int s[64];
    int t = threadIdx.x;
    s[t] = t;
    if (use_syncwarp)
        __syncwarp();
    out[t] = s[t ^ 1];
}

extern "C" __global__ void cross_warp(int *out)
{
    __shared__ int s[64];
    s[threadIdx.x] = threadIdx.x;
    out[threadIdx.x] = s[63 - threadIdx.x];
}

extern "C" __global__ void char_shared(const char *in, int *out)
{
    __shared__ char s[256];
    int t = threadIdx.x;
    s[t] = in[t];
    __syncthreads();
    int c = 0;
    for (int k = 0; k < 4; ++k)
        c += (s[(t + k) % 256] == 'A');
    out[t] = c;
}

extern "C" __global__ void coords3d(int *out, int nx, int ny, int nz)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x < nx && y < ny && z < nz)
        out[(z * ny + y) * nx + x] = x + 100 * y + 10000 * z + 1000000 * (threadIdx.x + threadIdx.y * blockDim.x) ;
}

extern "C" __global__ void uint8_histogram(const unsigned char *in, unsigned int *hist, int n)
{
    __shared__ unsigned int local[256];
    for (int b = threadIdx.x; b < 256; b += blockDim.x)
        local[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&local[in[i]], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += blockDim.x)
        if (local[b])
            atomicAdd(&hist[b], local[b]);
}

extern "C" __global__ void double_math(const double *in, double *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        double x = in[i];
        out[3 * i] = x / 3.0 + sqrt(fabs(x));
        out[3 * i + 1] = fma(x, x, -1.0);
        out[3 * i + 2] = (double)(float)x - floor(x);
    }
}
