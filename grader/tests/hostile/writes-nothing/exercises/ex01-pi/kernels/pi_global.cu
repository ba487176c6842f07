// hostile/writes-nothing: an empty kernel (the stub with its TODOs deleted).
extern "C" __global__ void pi_global(const float *x, const float *y, int n, unsigned int *hits)
{
}
