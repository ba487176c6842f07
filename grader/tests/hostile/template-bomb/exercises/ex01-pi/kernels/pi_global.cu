// hostile/template-bomb: template recursion 100000 deep. NVRTC stops at its
// instantiation depth limit with an error, in well under a second.
template <unsigned N> struct Count { static const unsigned value = Count<N - 1>::value + 1; };
template <> struct Count<0> { static const unsigned value = 0; };

extern "C" __global__ void pi_global(const float *x, const float *y, int n, unsigned int *hits)
{
    if (blockIdx.x == 0 && threadIdx.x == 0)
        atomicAdd(hits, Count<100000>::value);
}
