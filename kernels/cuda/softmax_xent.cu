/* Fused softmax + cross-entropy of one sample on the GPU (see dahl_softmax_xent). K is a class count (10
 * for Fashion-MNIST): one thread walks the logits in the CPU's order, with the same double-precision sum and
 * log, so loss and gradient match the CPU's to the last bits of exp/log; a parallel reduction would not pay
 * for itself at this size. */
#include "dahl_cuda_common.cuh"

__global__ static void softmax_xent_kernel(int k, const float *logits, int label, float *loss, float *dlogits,
                                           float *correct)
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
    /* Everything is read from logits before dlogits (possibly the same buffer) is written. */
    const float l_label = logits[label];
    *loss = (float)(log(sum) - ((double)l_label - max));
    *correct = argmax == label ? 1.0f : 0.0f;
    const double inv = 1.0 / sum;
    for (int i = 0; i < k; i++) {
        dlogits[i] = (float)(exp((double)logits[i] - max) * inv);
    }
    dlogits[label] -= 1.0f;
}

int dahl_cuda_softmax_xent(int k, const float *logits, int label, float *loss, float *dlogits, float *correct,
                           dahl_cuda_stream stream)
{
    if (k < 1 || label < 0 || label >= k)
        return dahl_cuda_fail("softmax_xent", "expected k >= 1 and 0 <= label < k");
    softmax_xent_kernel<<<1, 1, 0, stream>>>(k, logits, label, loss, dlogits, correct);
    return dahl_cuda_check_launch("softmax_xent");
}
