/* SGD step on the GPU (see dahl_sgd_update): PyTorch's momentum convention, v = momentum * v + g;
 * p -= lr * v. Explicitly rounded operations (no fused multiply-add) give the CPU's results bit for bit. */
#include "dahl_cuda_common.cuh"

__global__ static void sgd_kernel(size_t n, float *param, const float *grad, float lr)
{
    DAHL_CUDA_FOR(i, n)
    {
        param[i] = __fsub_rn(param[i], __fmul_rn(lr, grad[i]));
    }
}

__global__ static void sgd_momentum_kernel(size_t n, float *param, const float *grad, float *velocity, float lr,
                                           float momentum)
{
    DAHL_CUDA_FOR(i, n)
    {
        const float v = __fadd_rn(__fmul_rn(momentum, velocity[i]), grad[i]);
        velocity[i] = v;
        param[i] = __fsub_rn(param[i], __fmul_rn(lr, v));
    }
}

int dahl_cuda_sgd_update(size_t n, float *param, const float *grad, float *velocity, float lr, float momentum,
                         dahl_cuda_stream stream)
{
    if (n == 0)
        return 0;
    if (velocity == NULL || momentum == 0.0f)
        sgd_kernel<<<dahl_cuda_blocks(n), DAHL_CUDA_THREADS, 0, stream>>>(n, param, grad, lr);
    else
        sgd_momentum_kernel<<<dahl_cuda_blocks(n), DAHL_CUDA_THREADS, 0, stream>>>(n, param, grad, velocity, lr,
                                                                                     momentum);
    return dahl_cuda_check_launch("sgd update");
}
