/* Dense (fully connected) layer of one sample on the GPU (see kernels/cpu/dense.c): x [N_in],
 * w [N_out][N_in] row-major, b [N_out], y [N_out]. One sample makes the products matrix-vector (cuBLAS
 * SGEMV) and outer (SGER). To column-major cuBLAS, w is an [N_in][N_out] matrix (w^T) with ld N_in. */
#include "dahl_cuda_common.cuh"

int dahl_cuda_dense_forward(int n_in, int n_out, const float *x, const float *w, const float *b, float *y,
                            dahl_cuda_stream stream, dahl_cublas blas)
{
    const float one = 1.0f;
    if (dahl_cuda_check_blas("dense forward: cublasSetStream", cublasSetStream(blas, stream)) != 0 ||
        dahl_cuda_check("dense forward: cudaMemcpyAsync",
                        cudaMemcpyAsync(y, b, (size_t)n_out * sizeof(float), cudaMemcpyDeviceToDevice, stream)) != 0)
        return -1;
    /* y [N_out] += w x = (w^T)^T x. */
    return dahl_cuda_check_blas("dense forward: cublasSgemv",
                                cublasSgemv(blas, CUBLAS_OP_T, n_in, n_out, &one, w, n_in, x, 1, &one, y, 1));
}

int dahl_cuda_dense_backward_input(int n_in, int n_out, const float *dy, const float *w, float *dx,
                                   dahl_cuda_stream stream, dahl_cublas blas)
{
    const float one = 1.0f, zero = 0.0f;
    if (dahl_cuda_check_blas("dense backward_input: cublasSetStream", cublasSetStream(blas, stream)) != 0)
        return -1;
    /* dx [N_in] = w^T dy. */
    return dahl_cuda_check_blas("dense backward_input: cublasSgemv",
                                cublasSgemv(blas, CUBLAS_OP_N, n_in, n_out, &one, w, n_in, dy, 1, &zero, dx, 1));
}

int dahl_cuda_dense_backward_weights(int n_in, int n_out, const float *x, const float *dy, float *dw, float *db,
                                     dahl_cuda_stream stream, dahl_cublas blas)
{
    const float one = 1.0f;
    if (dahl_cuda_check_blas("dense backward_weights: cublasSetStream", cublasSetStream(blas, stream)) != 0)
        return -1;
    /* dw [N_out][N_in] += dy x^T, i.e. (dw^T) += x dy^T; db += dy. */
    if (dahl_cuda_check_blas("dense backward_weights: cublasSger",
                             cublasSger(blas, n_in, n_out, &one, x, 1, dy, 1, dw, n_in)) != 0)
        return -1;
    return dahl_cuda_check_blas("dense backward_weights: cublasSaxpy",
                                cublasSaxpy(blas, n_out, &one, dy, 1, db, 1));
}
