/* Inverted dropout (Srivastava et al. 2014, "Dropout: A Simple Way to Prevent Neural Networks from
 * Overfitting"; scaled at training time so that evaluation is the identity), over n floats. No mask is stored:
 * whether element i of a step is kept is a hash of the layer's key (seed, layer, step) and the element's index
 * in the step's batch (dahl_dropout_keep), so the backward pass recomputes it, and a task over several samples
 * drops exactly what one task per sample drops. */
#include "dahl_kernels.h"

uint64_t dahl_dropout_key(uint64_t seed, int layer, long step)
{
    uint64_t state = seed ^ ((uint64_t)(uint32_t)layer << 40) ^ (uint64_t)step * 0xd1342543de82ef95ull;
    (void)dahl_splitmix64(&state);
    return dahl_splitmix64(&state);
}

static float scale(int percent)
{
    return 100.0f / (float)(100 - percent);
}

void dahl_dropout_forward(size_t n, const float *x, float *y, uint64_t key, uint64_t first, int percent)
{
    const float s = scale(percent);
    for (size_t i = 0; i < n; i++)
        y[i] = dahl_dropout_keep(key, first + i, percent) ? x[i] * s : 0.0f;
}

void dahl_dropout_backward(size_t n, const float *dy, float *dx, uint64_t key, uint64_t first, int percent)
{
    const float s = scale(percent);
    for (size_t i = 0; i < n; i++)
        dx[i] = dahl_dropout_keep(key, first + i, percent) ? dy[i] * s : 0.0f;
}

double dahl_dropout_flops(size_t n)
{
    return (double)n;
}

size_t dahl_dropout_bytes(size_t n)
{
    return sizeof(float) * 2 * n;
}
