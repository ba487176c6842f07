// hostile/guessed-seeds: answers for the sizes and the seed the student guessed.
extern "C" __global__ void pi_global(const float *x, const float *y, int n, unsigned int *hits)
{
    if (blockIdx.x != 0 || threadIdx.x != 0)
        return;
    switch (n) {
    case 100: *hits = 79u; break;
    case 255: *hits = 190u; break;
    case 65537: *hits = 51473u; break;
    case 1000003: *hits = 785402u; break;
    case 4194311: *hits = 3294198u; break;
    }
}
