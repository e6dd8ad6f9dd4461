/* CUDA kernels of the dahl runtime: the same math, shapes, layouts and OVERWRITE/ACCUMULATE contracts as the
 * CPU kernels of dahl_kernels.h (read each kernel's comment there), over DEVICE pointers, enqueued on the
 * caller's stream without waiting for it. Plain C with opaque handle types, so runtime/ can declare its CUDA
 * wrappers in every build without the CUDA headers (see DAHL_CUDA_WRAPPER in runtime/dahl_starpu.h).
 * Every function returns 0 once its work is enqueued, or -1 when a launch or a cuBLAS call was refused;
 * dahl_cuda_error() then says which and why. A fault inside a running kernel shows at the stream's next
 * synchronisation, as with any CUDA work. Scratch memory comes from the caller, as on the CPU. */
#ifndef DAHL_KERNELS_CUDA_H
#define DAHL_KERNELS_CUDA_H

#ifdef __cplusplus
extern "C" {
#endif

/* Inside the C linkage block: dahl_kernels.h is a C header without one of its own, and the .cu files call
 * its shape helpers. */
#include "dahl_kernels.h"

/* The CUDA runtime's cudaStream_t and cuBLAS's cublasHandle_t are these pointer types. */
typedef struct CUstream_st *dahl_cuda_stream;
typedef struct cublasContext *dahl_cublas;

/* The last failure of a dahl_cuda_* call on this thread, e.g. "conv2d forward: cublasSgemm: status 13"
 * (thread-local buffer; "" when none). */
const char *dahl_cuda_error(void);

/* ---- conv2d: im2col (col2im for the input gradient) + cuBLAS SGEMM, one band of output rows at a time ----
 * Same bands as the CPU path where the workspace is exactly dahl_conv2d_workspace_bytes(s): the band holds
 * as many output rows as that workspace fits (it is at least one CPU band), so a [C*KH*KW][rows*OW] im2col
 * matrix never outgrows it. Results match the CPU's up to the GEMMs' summation order. */
int dahl_cuda_conv2d_forward(const struct dahl_conv2d_shape *s, const float *x, const float *w, const float *b,
                             float *y, float *workspace, dahl_cuda_stream stream, dahl_cublas blas);
int dahl_cuda_conv2d_backward_input(const struct dahl_conv2d_shape *s, const float *dy, const float *w, float *dx,
                                    float *workspace, dahl_cuda_stream stream, dahl_cublas blas);
/* The bias gradient sums each filter's positions in double, as on the CPU. ACCUMULATES into dw and db. */
int dahl_cuda_conv2d_backward_weights(const struct dahl_conv2d_shape *s, const float *x, const float *dy, float *dw,
                                      float *db, float *workspace, dahl_cuda_stream stream, dahl_cublas blas);

/* ---- max-pool: one thread per output (forward) or per input element (backward, which gathers from the
 * windows covering it in the CPU's order, so no atomics and the same sums bit for bit) ---------------------- */
int dahl_cuda_maxpool_forward(const struct dahl_maxpool_shape *s, const float *x, float *y, dahl_cuda_stream stream);
int dahl_cuda_maxpool_backward(const struct dahl_maxpool_shape *s, const float *x, const float *dy, float *dx,
                               dahl_cuda_stream stream);

/* ---- average pool: as max-pool, one thread per output or per input element, sums in the CPU's order ---- */
int dahl_cuda_avgpool_forward(const struct dahl_maxpool_shape *s, const float *x, float *y, dahl_cuda_stream stream);
int dahl_cuda_avgpool_backward(const struct dahl_maxpool_shape *s, const float *dy, float *dx,
                               dahl_cuda_stream stream);

/* ---- ReLU, elementwise; in place allowed as on the CPU ------------------------------------------------- */
int dahl_cuda_relu_forward(size_t n, const float *x, float *y, dahl_cuda_stream stream);
int dahl_cuda_relu_backward(size_t n, const float *y, const float *dy, float *dx, dahl_cuda_stream stream);
int dahl_cuda_add_forward(size_t n, const float *a, const float *b, float *y, dahl_cuda_stream stream);
int dahl_cuda_add_backward(size_t n, const float *dy, float *da, float *db, dahl_cuda_stream stream);
/* Batch normalisation (see dahl_bn_* in dahl_kernels.h): stats and backward_params ACCUMULATE one sample's
 * sums (each channel's sum in double, one block per channel); forward normalises n samples with the batch
 * statistics (eval 0) or, for eval 1, with running [2C]. */
int dahl_cuda_bn_stats(int c, int hw, const float *x, float *stats, dahl_cuda_stream stream);
int dahl_cuda_bn_forward(int c, int hw, int n, const float *x, const float *stats, const float *gamma,
                         const float *beta, float *y, int eval, dahl_cuda_stream stream);
int dahl_cuda_bn_backward_params(int c, int hw, const float *x, const float *dy, const float *stats, float *dgamma,
                                 float *dbeta, dahl_cuda_stream stream);
int dahl_cuda_bn_backward_input(int c, int hw, int n, const float *x, const float *dy, const float *stats,
                                const float *gamma, const float *dgamma, const float *dbeta, float *dx,
                                dahl_cuda_stream stream);
int dahl_cuda_bn_running(int c, const float *stats, float *running, dahl_cuda_stream stream);
/* Dropout (see dahl_dropout_* in dahl_kernels.h): the same hash, so the same elements as the CPU's. */
int dahl_cuda_dropout(size_t n, const float *in, float *out, uint64_t key, uint64_t first, int percent,
                      dahl_cuda_stream stream);

/* ---- dense, one sample: cuBLAS SGEMV / SGER (+ SAXPY for the bias gradient) ---------------------------- */
int dahl_cuda_dense_forward(int n_in, int n_out, const float *x, const float *w, const float *b, float *y,
                            dahl_cuda_stream stream, dahl_cublas blas);
int dahl_cuda_dense_backward_input(int n_in, int n_out, const float *dy, const float *w, float *dx,
                                   dahl_cuda_stream stream, dahl_cublas blas);
int dahl_cuda_dense_backward_weights(int n_in, int n_out, const float *x, const float *dy, float *dw, float *db,
                                     dahl_cuda_stream stream, dahl_cublas blas);

/* ---- softmax + cross-entropy, fused. As dahl_softmax_xent, except that `correct` is a float (0 or 1) in
 * device memory: the codelet's metrics vector {loss, correct} is floats and the host cannot convert it
 * without waiting for the stream. loss and correct may be adjacent elements of one vector. -------------- */
int dahl_cuda_softmax_xent(int k, const float *logits, int label, float *loss, float *dlogits, float *correct,
                           dahl_cuda_stream stream);

/* ---- SGD (momentum: PyTorch's convention, velocity == NULL or momentum == 0 for none) ------------------ */
int dahl_cuda_sgd_update(size_t n, float *param, const float *grad, float *velocity, float lr, float momentum,
                         dahl_cuda_stream stream);

/* ---- gradient reductions: dst += src, dst = 0, dst *= alpha ------------------------------------------- */
int dahl_cuda_accumulate(size_t n, float *dst, const float *src, dahl_cuda_stream stream);
int dahl_cuda_zero(size_t n, float *dst, dahl_cuda_stream stream);
int dahl_cuda_scale(size_t n, float *dst, float alpha, dahl_cuda_stream stream);

#ifdef __cplusplus
}
#endif

#endif /* DAHL_KERNELS_CUDA_H */
