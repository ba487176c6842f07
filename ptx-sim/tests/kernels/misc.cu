// Constant memory, dynamic shared memory, faults, barriers, printf, local arrays,
// device-function calls and generic pointers.
__constant__ float coef[5];
__device__ int device_counter;

extern "C" __global__ void stencil_const(const float *in, float *out, int n)
{
    // 1D stencil of radius 2 with a halo in shared memory; weights in constant memory.
    __shared__ float s[256 + 4];
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    int l = threadIdx.x + 2;
    s[l] = (g < n) ? in[g] : 0.0f;
    if (threadIdx.x < 2) {
        int left = g - 2;
        int right = g + blockDim.x;
        s[l - 2] = (left >= 0 && left < n) ? in[left] : 0.0f;
        s[l + blockDim.x] = (right < n) ? in[right] : 0.0f;
    }
    __syncthreads();
    if (g < n) {
        float r = 0.0f;
        for (int k = -2; k <= 2; ++k)
            r += coef[k + 2] * s[l + k];
        out[g] = r;
    }
    if (g == 0)
        atomicAdd(&device_counter, 1);
}

extern "C" __global__ void dyn_shared_two(const float *a, const float *b, float *out, int n)
{
    extern __shared__ float buf[];
    float *sa = buf;
    float *sb = buf + blockDim.x;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    sa[threadIdx.x] = i < n ? a[i] : 0.0f;
    sb[threadIdx.x] = i < n ? b[i] : 0.0f;
    __syncthreads();
    int j = blockDim.x - 1 - threadIdx.x;
    if (i < n)
        out[i] = sa[j] * sb[j];
}

extern "C" __global__ void oob_write(float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i + n] = 1.0f;
}

extern "C" __global__ void forever(int *flag)
{
    while (*(volatile int *)flag == 0) {
    }
}

extern "C" __global__ void bad_barrier(int *out)
{
    __shared__ int s[64];
    int t = threadIdx.x;
    s[t] = t;
    if (t < 16) {
        __syncthreads();
        s[t] += s[t + 16];
    }
    __syncthreads();
    out[t] = s[t];
}

extern "C" __global__ void early_exit_barrier(int *out, int n)
{
    __shared__ int s[64];
    int t = threadIdx.x;
    if (t >= n)
        return;
    s[t] = t;
    __syncthreads();
    out[t] = s[n - 1 - t];
}

extern "C" __global__ void hello(int n)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n)
        printf("thread %d of %d: %f %s %c %u %lld %x\n", t, n, 0.5f * t, "ok", 'A' + t, 7u, -5ll, 255);
}

extern "C" __global__ void local_array(const int *in, int *out, int n)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int a[32];
    for (int k = 0; k < 32; ++k)
        a[k] = in[(t + k) % n];
    int idx = in[t] & 31;
    out[t] = a[idx] + a[(idx * 7) & 31];
}

__device__ __noinline__ int helper(int a, int b) { return a * b + 1; }

extern "C" __global__ void calls(int *out)
{
    int t = threadIdx.x;
    out[t] = helper(t, t + 1);
}

extern "C" __global__ void generic_shared(int *out)
{
    __shared__ int s[128];
    int *p = (threadIdx.x & 1) ? s : out;   // a generic pointer to either space
    p[threadIdx.x] = threadIdx.x;
    __syncthreads();
    out[64 + threadIdx.x] = s[threadIdx.x ^ 1];
}
