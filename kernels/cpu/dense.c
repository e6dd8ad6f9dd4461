/* Dense (fully connected) layer for one sample over single-threaded BLAS: x [N_in], w [N_out][N_in] row-major,
 * b [N_out], y [N_out]. One sample makes the products matrix-vector (SGEMV) and outer (SGER), not SGEMM. */
#include "dahl_kernels.h"

#include <cblas.h>
#include <string.h>

void dahl_dense_forward(int n_in, int n_out, const float *x, const float *w, const float *b, float *y)
{
    memcpy(y, b, (size_t)n_out * sizeof(float));
    cblas_sgemv(CblasRowMajor, CblasNoTrans, n_out, n_in, 1.0f, w, n_in, x, 1, 1.0f, y, 1);
}

void dahl_dense_backward_input(int n_in, int n_out, const float *dy, const float *w, float *dx)
{
    cblas_sgemv(CblasRowMajor, CblasTrans, n_out, n_in, 1.0f, w, n_in, dy, 1, 0.0f, dx, 1);
}

void dahl_dense_backward_weights(int n_in, int n_out, const float *x, const float *dy, float *dw, float *db)
{
    cblas_sger(CblasRowMajor, n_out, n_in, 1.0f, dy, 1, x, 1, dw, n_in);
    for (int i = 0; i < n_out; i++) {
        db[i] += dy[i];
    }
}

double dahl_dense_forward_flops(int n_in, int n_out)
{
    return 2.0 * n_in * n_out + n_out;
}

double dahl_dense_backward_input_flops(int n_in, int n_out)
{
    return 2.0 * n_in * n_out;
}

double dahl_dense_backward_weights_flops(int n_in, int n_out)
{
    return 2.0 * n_in * n_out + n_out;
}

size_t dahl_dense_forward_bytes(int n_in, int n_out)
{
    const size_t i = (size_t)n_in, o = (size_t)n_out;
    return sizeof(float) * (i + i * o + 2 * o);
}

size_t dahl_dense_backward_input_bytes(int n_in, int n_out)
{
    const size_t i = (size_t)n_in, o = (size_t)n_out;
    return sizeof(float) * (o + i * o + i);
}

size_t dahl_dense_backward_weights_bytes(int n_in, int n_out)
{
    const size_t i = (size_t)n_in, o = (size_t)n_out;
    return sizeof(float) * (i + o + 2 * i * o + 2 * o);
}
