// The grader's check of a timed convolution: every output pixel against the
// convolution in double of the same image and mask (ghost cells 0), within
// the bound of the correctness checks (src/cpu.rs, `tolerance`):
// 2 gamma_k sum |mask * pixel| + the smallest normal float, for k taps, true
// of any float summation order with or without FMA. The timed pixels and
// weights are full-precision floats, so a right output is not one set of
// bits. Lowers *first to the index of a pixel outside it, or not finite.
extern "C" __global__ void conv2d_check(const float *in, const float *mask, const float *out, int r, int width,
                                        int height, double gamma2, double floor_, unsigned long long *first)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= height || col >= width)
        return;
    int w = 2 * r + 1;
    double sum = 0.0, magnitude = 0.0;
    for (int i = 0; i < w; i++) {
        int y = row - r + i;
        if (y < 0 || y >= height)
            continue;
        for (int j = 0; j < w; j++) {
            int x = col - r + j;
            if (x >= 0 && x < width) {
                double p = (double)mask[i * w + j] * (double)in[y * width + x];
                sum += p;
                magnitude += fabs(p);
            }
        }
    }
    float got = out[row * width + col];
    if (!isfinite(got) || fabs((double)got - sum) > gamma2 * magnitude + floor_)
        atomicMin(first, (unsigned long long)row * width + col);
}
