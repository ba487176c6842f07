// hostile/guessed-constant: writes the count of the student's one test run.
extern "C" __global__ void pi_global(const float *x, const float *y, int n, unsigned int *hits)
{
    if (blockIdx.x == 0 && threadIdx.x == 0)
        *hits = 785398u;
}
