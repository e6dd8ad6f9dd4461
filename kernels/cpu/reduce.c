/* Elementwise helpers for gradient reductions over n floats: accumulate (dst += src, how per-sample gradients
 * are summed), zero (its neutral element) and scale (a sum into a mean). */
#include "dahl_kernels.h"

#include <string.h>

void dahl_accumulate(size_t n, float *dst, const float *src)
{
    for (size_t i = 0; i < n; i++) {
        dst[i] += src[i];
    }
}

void dahl_zero(size_t n, float *dst)
{
    memset(dst, 0, n * sizeof(float));
}

void dahl_scale(size_t n, float *dst, float alpha)
{
    for (size_t i = 0; i < n; i++) {
        dst[i] *= alpha;
    }
}

double dahl_accumulate_flops(size_t n)
{
    return (double)n;
}

size_t dahl_accumulate_bytes(size_t n)
{
    return sizeof(float) * 3 * n;
}

double dahl_zero_flops(size_t n)
{
    (void)n;
    return 0.0;
}

size_t dahl_zero_bytes(size_t n)
{
    return sizeof(float) * n;
}

double dahl_scale_flops(size_t n)
{
    return (double)n;
}

size_t dahl_scale_bytes(size_t n)
{
    return sizeof(float) * 2 * n;
}
