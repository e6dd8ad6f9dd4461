/* Element-wise add on the GPU (see dahl_add_forward/backward): one addition per element, as on the CPU, so the
 * results are identical bit for bit; the backward pass is two device-to-device copies. */
#include "dahl_cuda_common.cuh"

__global__ static void add_forward_kernel(size_t n, const float *a, const float *b, float *y)
{
    DAHL_CUDA_FOR(i, n)
    {
        y[i] = a[i] + b[i];
    }
}

int dahl_cuda_add_forward(size_t n, const float *a, const float *b, float *y, dahl_cuda_stream stream)
{
    if (n == 0)
        return 0;
    add_forward_kernel<<<dahl_cuda_blocks(n), DAHL_CUDA_THREADS, 0, stream>>>(n, a, b, y);
    return dahl_cuda_check_launch("add forward");
}

int dahl_cuda_add_backward(size_t n, const float *dy, float *da, float *db, dahl_cuda_stream stream)
{
    if (n == 0)
        return 0;
    if (dahl_cuda_check("add backward: cudaMemcpyAsync",
                        cudaMemcpyAsync(da, dy, n * sizeof(float), cudaMemcpyDeviceToDevice, stream)) != 0)
        return -1;
    return dahl_cuda_check("add backward: cudaMemcpyAsync",
                           cudaMemcpyAsync(db, dy, n * sizeof(float), cudaMemcpyDeviceToDevice, stream));
}
