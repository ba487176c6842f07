// __syncthreads_count / _and / _or: block-wide predicates.
extern "C" __global__ void k(const int *in_i, const float *in_f, const double *in_d, int *out_i, float *out_f, double *out_d, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? in_i[i] : 0;
    int c = __syncthreads_count(v > 100);
    int a = __syncthreads_and(v > -990);
    int o = __syncthreads_or(v > 995);
    if (i < n) {
        out_i[i] = c;
        out_f[i] = (float)a;
        out_d[i] = (double)o;
    }
}
