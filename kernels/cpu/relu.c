/* ReLU forward and backward, elementwise over n floats (any tensor, any layout). The backward pass reads the
 * forward OUTPUT, so the forward may run in place on its input. */
#include "dahl_kernels.h"

void dahl_relu_forward(size_t n, const float *x, float *y)
{
    for (size_t i = 0; i < n; i++) {
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
    }
}

void dahl_relu_backward(size_t n, const float *y, const float *dy, float *dx)
{
    for (size_t i = 0; i < n; i++) {
        dx[i] = y[i] > 0.0f ? dy[i] : 0.0f;
    }
}

double dahl_relu_forward_flops(size_t n)
{
    return (double)n;
}

double dahl_relu_backward_flops(size_t n)
{
    return (double)n;
}

size_t dahl_relu_forward_bytes(size_t n)
{
    return sizeof(float) * 2 * n;
}

size_t dahl_relu_backward_bytes(size_t n)
{
    return sizeof(float) * 3 * n;
}
