/* conv2d forward and backward of one sample on the GPU, as im2col (col2im for the input gradient) + cuBLAS
 * SGEMM, the CPU's im2col path (see kernels/cpu/conv2d.c). Layouts: x [C][H][W], w [F][C][KH][KW] (a
 * row-major [F][K] matrix, K = C*KH*KW), b [F], y [F][OH][OW] (a row-major [F][N] matrix, N = OH*OW); the
 * workspace holds one band of output rows of the im2col matrix, col [K][nb], nb = rows*OW.
 * cuBLAS is column-major: a row-major [r][c] matrix with leading dimension ld is, to cuBLAS, its [c][r]
 * transpose with the same ld, so each row-major product C = A B below is issued as C^T = B^T A^T. */
#include "dahl_cuda_common.cuh"

/* Output rows per band: as many as the workspace the runtime allocates (dahl_conv2d_workspace_bytes, at
 * least one CPU band) can hold, at least one, at most OH. Fewer, larger GEMMs suit a GPU better. */
static int band_rows(const struct dahl_conv2d_shape *s)
{
    const size_t k = (size_t)s->c * s->kh * s->kw;
    const size_t row_bytes = k * (size_t)dahl_conv2d_out_w(s) * sizeof(float);
    const size_t rows = dahl_conv2d_workspace_bytes(s) / row_bytes;
    const int oh_n = dahl_conv2d_out_h(s);
    return rows < 1 ? 1 : rows > (size_t)oh_n ? oh_n : (int)rows;
}

/* col[(c*KH + ki)*KW + kj][(oh - oh0)*OW + ow] = x[c][oh*stride - pad + ki][ow*stride - pad + kj], 0 in
 * the padding; one thread per col element of the band [oh0, oh0 + nb/OW). */
__global__ static void im2col_kernel(const struct dahl_conv2d_shape s, int ow_n, int oh0, int nb, size_t total,
                                     const float *x, float *col)
{
    DAHL_CUDA_FOR(i, total)
    {
        const int j = (int)(i % nb);
        const size_t r = i / nb;
        const int kj = (int)(r % s.kw), ki = (int)(r / s.kw % s.kh);
        const size_t c = r / ((size_t)s.kw * s.kh);
        const int ih = (oh0 + j / ow_n) * s.stride - s.pad + ki;
        const int iw = (j % ow_n) * s.stride - s.pad + kj;
        col[i] = ih >= 0 && ih < s.h && iw >= 0 && iw < s.w ? x[(c * s.h + ih) * s.w + iw] : 0.0f;
    }
}

/* The adjoint of im2col for one band, as a gather: one thread per dx element adds every col entry that
 * im2col copied from it, in (ki, kj) order as the CPU's scatter does, so no atomics are needed. ACCUMULATES
 * into dx. */
__global__ static void col2im_add_kernel(const struct dahl_conv2d_shape s, int ow_n, int oh0, int oh1, int nb,
                                         size_t total, const float *col, float *dx)
{
    DAHL_CUDA_FOR(i, total)
    {
        const int iw = (int)(i % s.w), ih = (int)(i / s.w % s.h);
        const size_t c = i / ((size_t)s.w * s.h);
        float acc = dx[i];
        for (int ki = 0; ki < s.kh; ki++) {
            const int oh_s = ih + s.pad - ki; /* = oh * stride where the window row matches */
            if (oh_s < 0 || oh_s % s.stride != 0)
                continue;
            const int oh = oh_s / s.stride;
            if (oh < oh0 || oh >= oh1)
                continue;
            for (int kj = 0; kj < s.kw; kj++) {
                const int ow_s = iw + s.pad - kj;
                if (ow_s < 0 || ow_s % s.stride != 0)
                    continue;
                const int ow = ow_s / s.stride;
                if (ow >= ow_n)
                    continue;
                const size_t row = (c * s.kh + ki) * s.kw + kj;
                acc = __fadd_rn(acc, col[row * nb + (size_t)(oh - oh0) * ow_n + ow]);
            }
        }
        dx[i] = acc;
    }
}

/* y[f][p] = b[f] for every position p: the forward GEMMs then add w * col onto it. */
__global__ static void bias_fill_kernel(size_t total, size_t n, const float *b, float *y)
{
    DAHL_CUDA_FOR(i, total)
    {
        y[i] = b[i / n];
    }
}

/* db[f] += sum over positions of dy[f][.], summed in double as on the CPU: one block per filter, a tree
 * reduction in shared memory. */
__global__ static void bias_grad_kernel(size_t n, const float *dy, float *db)
{
    __shared__ double partial[DAHL_CUDA_THREADS];
    const float *dyf = dy + (size_t)blockIdx.x * n;
    double sum = 0.0;
    for (size_t j = threadIdx.x; j < n; j += blockDim.x) {
        sum += dyf[j];
    }
    partial[threadIdx.x] = sum;
    __syncthreads();
    for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
        if (threadIdx.x < half)
            partial[threadIdx.x] += partial[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        db[blockIdx.x] += (float)partial[0];
}

int dahl_cuda_conv2d_forward(const struct dahl_conv2d_shape *s, const float *x, const float *w, const float *b,
                             float *y, float *workspace, dahl_cuda_stream stream, dahl_cublas blas)
{
    if (!dahl_conv2d_shape_valid(s))
        return dahl_cuda_fail("conv2d forward", "invalid shape");
    const int f = s->f, k = s->c * s->kh * s->kw;
    const int oh_n = dahl_conv2d_out_h(s), ow_n = dahl_conv2d_out_w(s), rows = band_rows(s);
    const int n = oh_n * ow_n;
    const float one = 1.0f;
    if (dahl_cuda_check_blas("conv2d forward: cublasSetStream", cublasSetStream(blas, stream)) != 0)
        return -1;
    const size_t y_count = (size_t)f * n;
    bias_fill_kernel<<<dahl_cuda_blocks(y_count), DAHL_CUDA_THREADS, 0, stream>>>(y_count, (size_t)n, b, y);
    if (dahl_cuda_check_launch("conv2d forward: bias") != 0)
        return -1;
    for (int oh0 = 0; oh0 < oh_n; oh0 += rows) {
        const int oh1 = oh0 + rows < oh_n ? oh0 + rows : oh_n;
        const int nb = (oh1 - oh0) * ow_n;
        const size_t col_count = (size_t)k * nb;
        im2col_kernel<<<dahl_cuda_blocks(col_count), DAHL_CUDA_THREADS, 0, stream>>>(*s, ow_n, oh0, nb, col_count, x,
                                                                                    workspace);
        if (dahl_cuda_check_launch("conv2d forward: im2col") != 0)
            return -1;
        /* y[:, band] (row-major [F][nb], ld N) += w [F][K] * col [K][nb]. */
        if (dahl_cuda_check_blas("conv2d forward: cublasSgemm",
                                 cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, nb, f, k, &one, workspace, nb, w, k, &one,
                                             y + (size_t)oh0 * ow_n, n)) != 0)
            return -1;
    }
    return 0;
}

int dahl_cuda_conv2d_backward_input(const struct dahl_conv2d_shape *s, const float *dy, const float *w, float *dx,
                                    float *workspace, dahl_cuda_stream stream, dahl_cublas blas)
{
    if (!dahl_conv2d_shape_valid(s))
        return dahl_cuda_fail("conv2d backward_input", "invalid shape");
    const int f = s->f, k = s->c * s->kh * s->kw;
    const int oh_n = dahl_conv2d_out_h(s), ow_n = dahl_conv2d_out_w(s), rows = band_rows(s);
    const int n = oh_n * ow_n;
    const size_t x_count = (size_t)s->c * s->h * s->w;
    const float one = 1.0f, zero = 0.0f;
    if (dahl_cuda_check_blas("conv2d backward_input: cublasSetStream", cublasSetStream(blas, stream)) != 0 ||
        dahl_cuda_check("conv2d backward_input: cudaMemsetAsync",
                        cudaMemsetAsync(dx, 0, x_count * sizeof(float), stream)) != 0)
        return -1;
    for (int oh0 = 0; oh0 < oh_n; oh0 += rows) {
        const int oh1 = oh0 + rows < oh_n ? oh0 + rows : oh_n;
        const int nb = (oh1 - oh0) * ow_n;
        /* dcol [K][nb] = w^T [K][F] * dy[:, band] [F][nb]. */
        if (dahl_cuda_check_blas("conv2d backward_input: cublasSgemm",
                                 cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_T, nb, k, f, &one, dy + (size_t)oh0 * ow_n, n,
                                             w, k, &zero, workspace, nb)) != 0)
            return -1;
        col2im_add_kernel<<<dahl_cuda_blocks(x_count), DAHL_CUDA_THREADS, 0, stream>>>(*s, ow_n, oh0, oh1, nb, x_count,
                                                                                      workspace, dx);
        if (dahl_cuda_check_launch("conv2d backward_input: col2im") != 0)
            return -1;
    }
    return 0;
}

int dahl_cuda_conv2d_backward_weights(const struct dahl_conv2d_shape *s, const float *x, const float *dy, float *dw,
                                      float *db, float *workspace, dahl_cuda_stream stream, dahl_cublas blas)
{
    if (!dahl_conv2d_shape_valid(s))
        return dahl_cuda_fail("conv2d backward_weights", "invalid shape");
    const int f = s->f, k = s->c * s->kh * s->kw;
    const int oh_n = dahl_conv2d_out_h(s), ow_n = dahl_conv2d_out_w(s), rows = band_rows(s);
    const int n = oh_n * ow_n;
    const float one = 1.0f;
    if (dahl_cuda_check_blas("conv2d backward_weights: cublasSetStream", cublasSetStream(blas, stream)) != 0)
        return -1;
    for (int oh0 = 0; oh0 < oh_n; oh0 += rows) {
        const int oh1 = oh0 + rows < oh_n ? oh0 + rows : oh_n;
        const int nb = (oh1 - oh0) * ow_n;
        const size_t col_count = (size_t)k * nb;
        im2col_kernel<<<dahl_cuda_blocks(col_count), DAHL_CUDA_THREADS, 0, stream>>>(*s, ow_n, oh0, nb, col_count, x,
                                                                                    workspace);
        if (dahl_cuda_check_launch("conv2d backward_weights: im2col") != 0)
            return -1;
        /* dw [F][K] += dy[:, band] [F][nb] * col^T [nb][K]. */
        if (dahl_cuda_check_blas("conv2d backward_weights: cublasSgemm",
                                 cublasSgemm(blas, CUBLAS_OP_T, CUBLAS_OP_N, k, f, nb, &one, workspace, nb,
                                             dy + (size_t)oh0 * ow_n, n, &one, dw, k)) != 0)
            return -1;
    }
    bias_grad_kernel<<<f, DAHL_CUDA_THREADS, 0, stream>>>((size_t)n, dy, db);
    return dahl_cuda_check_launch("conv2d backward_weights: bias");
}
