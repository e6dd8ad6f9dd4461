/* Gradient reductions on the GPU (see dahl_accumulate/zero/scale). Explicitly rounded adds and multiplies
 * (__fadd_rn, __fmul_rn) keep nvcc from fusing them, so the results equal the CPU's bit for bit. */
#include "dahl_cuda_common.cuh"

__global__ static void accumulate_kernel(size_t n, float *dst, const float *src)
{
    DAHL_CUDA_FOR(i, n)
    {
        dst[i] = __fadd_rn(dst[i], src[i]);
    }
}

__global__ static void scale_kernel(size_t n, float *dst, float alpha)
{
    DAHL_CUDA_FOR(i, n)
    {
        dst[i] = __fmul_rn(dst[i], alpha);
    }
}

int dahl_cuda_accumulate(size_t n, float *dst, const float *src, dahl_cuda_stream stream)
{
    if (n == 0)
        return 0;
    accumulate_kernel<<<dahl_cuda_blocks(n), DAHL_CUDA_THREADS, 0, stream>>>(n, dst, src);
    return dahl_cuda_check_launch("accumulate");
}

int dahl_cuda_zero(size_t n, float *dst, dahl_cuda_stream stream)
{
    if (n == 0)
        return 0;
    return dahl_cuda_check("zero: cudaMemsetAsync", cudaMemsetAsync(dst, 0, n * sizeof(float), stream));
}

int dahl_cuda_scale(size_t n, float *dst, float alpha, dahl_cuda_stream stream)
{
    if (n == 0)
        return 0;
    scale_kernel<<<dahl_cuda_blocks(n), DAHL_CUDA_THREADS, 0, stream>>>(n, dst, alpha);
    return dahl_cuda_check_launch("scale");
}
