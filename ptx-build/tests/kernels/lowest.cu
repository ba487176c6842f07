extern "C" __global__ void lowest(const float *x, int n, float *out, int *ints)
{
    float m = INFINITY;
    for (int i = 0; i < n; ++i)
        m = fminf(m, x[i]);
    out[0] = m < FLT_MAX ? m : (n > 0 ? NAN : HUGE_VALF);
    out[1] = FLT_MIN + FLT_EPSILON;
    ints[0] = n > 0 ? INT_MAX : INT_MIN;
    ints[1] = (int)(UINT_MAX >> 1);
    double d = DBL_MAX + DBL_MIN + DBL_EPSILON + HUGE_VAL;
    out[2] = (float)d;
    MISTAKE
}
