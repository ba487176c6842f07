// The yardstick for bandwidth: a plain device-to-device copy, as fast as the
// memory system allows. Performance checks compare against it in the same run.
extern "C" __global__ void copy_f32(const float4 *__restrict__ in, float4 *__restrict__ out, unsigned long long n4)
{
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n4;
         i += (unsigned long long)gridDim.x * blockDim.x)
        out[i] = in[i];
}
