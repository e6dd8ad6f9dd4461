/* Stochastic gradient descent step over n parameters, in place, with optional momentum (PyTorch's form:
 * v = momentum * v + g; p -= lr * v), so the update is the same whether or not the caller averages first. */
#include "dahl_kernels.h"

void dahl_sgd_update(size_t n, float *param, const float *grad, float *velocity, float lr, float momentum)
{
    if (velocity == NULL || momentum == 0.0f) {
        for (size_t i = 0; i < n; i++) {
            param[i] -= lr * grad[i];
        }
        return;
    }
    for (size_t i = 0; i < n; i++) {
        velocity[i] = momentum * velocity[i] + grad[i];
        param[i] -= lr * velocity[i];
    }
}

double dahl_sgd_update_flops(size_t n, bool with_momentum)
{
    return (with_momentum ? 4.0 : 2.0) * (double)n;
}

size_t dahl_sgd_update_bytes(size_t n, bool with_momentum)
{
    return sizeof(float) * (with_momentum ? 5 : 3) * n;
}
