/* ReLU forward and backward on the GPU, elementwise over n floats (see dahl_relu_forward/backward): the same
 * comparisons as the CPU, so the results are identical bit for bit. */
#include "dahl_cuda_common.cuh"

__global__ static void relu_forward_kernel(size_t n, const float *x, float *y)
{
    DAHL_CUDA_FOR(i, n)
    {
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
    }
}

__global__ static void relu_backward_kernel(size_t n, const float *y, const float *dy, float *dx)
{
    DAHL_CUDA_FOR(i, n)
    {
        dx[i] = y[i] > 0.0f ? dy[i] : 0.0f;
    }
}

int dahl_cuda_relu_forward(size_t n, const float *x, float *y, dahl_cuda_stream stream)
{
    if (n == 0)
        return 0;
    relu_forward_kernel<<<dahl_cuda_blocks(n), DAHL_CUDA_THREADS, 0, stream>>>(n, x, y);
    return dahl_cuda_check_launch("relu forward");
}

int dahl_cuda_relu_backward(size_t n, const float *y, const float *dy, float *dx, dahl_cuda_stream stream)
{
    if (n == 0)
        return 0;
    relu_backward_kernel<<<dahl_cuda_blocks(n), DAHL_CUDA_THREADS, 0, stream>>>(n, y, dy, dx);
    return dahl_cuda_check_launch("relu backward");
}
