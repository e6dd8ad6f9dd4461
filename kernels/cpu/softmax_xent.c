/* Fused softmax + cross-entropy for one sample: logits [K] and an integer label give the loss, the gradient
 * dlogits [K] = softmax - onehot and whether the prediction was right. Shifting by the maximum logit keeps
 * exp() in range for any logits; the sum and the log run in double. */
#include "dahl_kernels.h"

#include <math.h>

void dahl_softmax_xent(int k, const float *logits, int label, float *loss, float *dlogits, int *correct)
{
    int argmax = 0;
    for (int i = 1; i < k; i++) {
        if (logits[i] > logits[argmax]) {
            argmax = i;
        }
    }
    const float max = logits[argmax];
    double sum = 0.0;
    for (int i = 0; i < k; i++) {
        sum += exp((double)logits[i] - max);
    }
    /* Read everything from logits before writing dlogits, which may be the same buffer. */
    *loss = (float)(log(sum) - ((double)logits[label] - max));
    *correct = argmax == label;
    const double inv = 1.0 / sum;
    for (int i = 0; i < k; i++) {
        dlogits[i] = (float)(exp((double)logits[i] - max) * inv);
    }
    dlogits[label] -= 1.0f;
}

double dahl_softmax_xent_flops(int k)
{
    return 5.0 * k + 2.0;
}

size_t dahl_softmax_xent_bytes(int k)
{
    return sizeof(float) * (2 * (size_t)k + 3);
}
