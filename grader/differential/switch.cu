// A switch on a run-time value (a jump table or a compare chain).
extern "C" __global__ void k(const int *in_i, const float *in_f, const double *in_d, int *out_i, float *out_f, double *out_d, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int v = in_i[i];
    float f = in_f[i];
    int r;
    switch ((v + 1000) % 9) {
    case 0: r = v * 3; break;
    case 1: r = v - 7; f = f * 2.0f; break;
    case 2: r = v ^ 0x55; break;
    case 3:
    case 4: r = v << 2; f = -f; break;
    case 5: r = v / 3; break;
    case 7: r = ~v; f = f * f; break;
    default: r = 0; break;
    }
    out_i[i] = r;
    out_f[i] = f;
}
