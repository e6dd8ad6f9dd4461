/* conv2d forward and backward for one sample, as im2col + single-threaded SGEMM (col2im for the input
 * gradient); forward goes to the direct kernel of conv2d_direct.c first, where the CPU and shape allow. Layouts: x [C][H][W], w [F][C][KH][KW] (= a row-major [F][C*KH*KW] matrix), b [F],
 * y [F][OH][OW] (= [F][OH*OW]); the workspace holds a band of output rows of the im2col matrix,
 * col [C*KH*KW][rows*OW]. */
#include "dahl_kernels.h"

#include <cblas.h>
#include <string.h>

bool dahl_conv2d_shape_valid(const struct dahl_conv2d_shape *s)
{
    return s->c > 0 && s->h > 0 && s->w > 0 && s->f > 0 && s->kh > 0 && s->kw > 0 && s->stride > 0 &&
           s->pad >= 0 && s->h + 2 * s->pad >= s->kh && s->w + 2 * s->pad >= s->kw;
}

int dahl_conv2d_out_h(const struct dahl_conv2d_shape *s)
{
    return (s->h + 2 * s->pad - s->kh) / s->stride + 1;
}

int dahl_conv2d_out_w(const struct dahl_conv2d_shape *s)
{
    return (s->w + 2 * s->pad - s->kw) / s->stride + 1;
}

/* Rows of the im2col matrix (C*KH*KW) and its columns (OH*OW). */
static size_t col_rows(const struct dahl_conv2d_shape *s)
{
    return (size_t)s->c * (size_t)s->kh * (size_t)s->kw;
}

static size_t col_cols(const struct dahl_conv2d_shape *s)
{
    return (size_t)dahl_conv2d_out_h(s) * (size_t)dahl_conv2d_out_w(s);
}

/* The im2col matrix is built one band of output rows at a time, sized to stay in a core's L2 cache between
 * im2col and the GEMM that reads it: a whole 3x512x512 sample would be a 28 MB matrix, written to and read
 * back from memory, which costs more than the GEMM itself. */
#define BAND_BYTES ((size_t)256 * 1024)

/* Output rows per band: as many as fit in BAND_BYTES, at least one, at most OH. */
static int band_rows(const struct dahl_conv2d_shape *s)
{
    const size_t row_bytes = col_rows(s) * (size_t)dahl_conv2d_out_w(s) * sizeof(float);
    const size_t rows = BAND_BYTES / row_bytes;
    const int oh_n = dahl_conv2d_out_h(s);
    return rows < 1 ? 1 : rows > (size_t)oh_n ? oh_n : (int)rows;
}

size_t dahl_conv2d_workspace_bytes(const struct dahl_conv2d_shape *s)
{
    const size_t band = col_rows(s) * (size_t)band_rows(s) * (size_t)dahl_conv2d_out_w(s) * sizeof(float);
    const size_t direct = dahl_conv2d_direct_workspace_bytes(s);
    return band > direct ? band : direct;
}

/* For kernel column kj: the output columns [*lo, *hi) whose input column ow*stride - pad + kj lies inside
 * [0, W); the others read padding. Hoisted out of the inner loops so those run branch-free. */
static void valid_ow_range(const struct dahl_conv2d_shape *s, int ow_count, int kj, int *lo, int *hi)
{
    const int off = kj - s->pad; /* iw = ow * stride + off */
    int a = off >= 0 ? 0 : (-off + s->stride - 1) / s->stride;
    int b = s->w - off <= 0 ? 0 : (s->w - off - 1) / s->stride + 1;
    if (b > ow_count) {
        b = ow_count;
    }
    if (a > b) {
        a = b;
    }
    *lo = a;
    *hi = b;
}

/* The band of output rows [oh0, oh1) of the im2col matrix, as col [C*KH*KW][(oh1 - oh0)*OW]:
 * col[(c*KH + ki)*KW + kj][(oh - oh0)*OW + ow] = x[c][oh*stride - pad + ki][ow*stride - pad + kj],
 * 0 in the padding. */
static void im2col(const struct dahl_conv2d_shape *s, const float *x, int oh0, int oh1, float *col)
{
    const int ow_n = dahl_conv2d_out_w(s);
    for (int c = 0; c < s->c; c++) {
        const float *xc = x + (size_t)c * s->h * s->w;
        for (int ki = 0; ki < s->kh; ki++) {
            for (int kj = 0; kj < s->kw; kj++) {
                int lo, hi;
                valid_ow_range(s, ow_n, kj, &lo, &hi);
                const int off = kj - s->pad;
                for (int oh = oh0; oh < oh1; oh++, col += ow_n) {
                    const int ih = oh * s->stride - s->pad + ki;
                    if (ih < 0 || ih >= s->h) {
                        memset(col, 0, (size_t)ow_n * sizeof(float));
                        continue;
                    }
                    const float *row = xc + (size_t)ih * s->w;
                    for (int ow = 0; ow < lo; ow++) {
                        col[ow] = 0.0f;
                    }
                    if (s->stride == 1) {
                        memcpy(col + lo, row + lo + off, (size_t)(hi - lo) * sizeof(float));
                    } else {
                        for (int ow = lo; ow < hi; ow++) {
                            col[ow] = row[ow * s->stride + off];
                        }
                    }
                    for (int ow = hi; ow < ow_n; ow++) {
                        col[ow] = 0.0f;
                    }
                }
            }
        }
    }
}

/* The adjoint of im2col for one band: adds each entry of col [C*KH*KW][(oh1 - oh0)*OW] onto the dx element
 * im2col would have copied it from (padding entries are dropped). ACCUMULATES into dx. */
static void col2im_add(const struct dahl_conv2d_shape *s, const float *col, int oh0, int oh1, float *dx)
{
    const int ow_n = dahl_conv2d_out_w(s);
    for (int c = 0; c < s->c; c++) {
        float *dxc = dx + (size_t)c * s->h * s->w;
        for (int ki = 0; ki < s->kh; ki++) {
            for (int kj = 0; kj < s->kw; kj++) {
                int lo, hi;
                valid_ow_range(s, ow_n, kj, &lo, &hi);
                const int off = kj - s->pad;
                for (int oh = oh0; oh < oh1; oh++, col += ow_n) {
                    const int ih = oh * s->stride - s->pad + ki;
                    if (ih < 0 || ih >= s->h) {
                        continue;
                    }
                    float *row = dxc + (size_t)ih * s->w;
                    for (int ow = lo; ow < hi; ow++) {
                        row[ow * s->stride + off] += col[ow];
                    }
                }
            }
        }
    }
}

/* Per band of output rows [oh0, oh1): columns [oh0*OW, oh1*OW) of y, dy and the full im2col matrix. The
 * GEMMs below address those columns in place (leading dimension N = OH*OW), the band's col with nb. */
void dahl_conv2d_forward(const struct dahl_conv2d_shape *s, const float *x, const float *w, const float *b,
                         float *y, float *workspace)
{
    if (!dahl_conv2d_forward_direct(s, x, w, b, y, workspace)) {
        dahl_conv2d_forward_im2col(s, x, w, b, y, workspace);
    }
}

void dahl_conv2d_forward_im2col(const struct dahl_conv2d_shape *s, const float *x, const float *w,
                                const float *b, float *y, float *workspace)
{
    const int m = s->f, n = (int)col_cols(s), k = (int)col_rows(s);
    const int oh_n = dahl_conv2d_out_h(s), ow_n = dahl_conv2d_out_w(s), rows = band_rows(s);
    for (int oh0 = 0; oh0 < oh_n; oh0 += rows) {
        const int oh1 = oh0 + rows < oh_n ? oh0 + rows : oh_n;
        const int nb = (oh1 - oh0) * ow_n;
        float *yb = y + (size_t)oh0 * ow_n;
        im2col(s, x, oh0, oh1, workspace);
        /* y starts as the bias, broadcast over the positions; the GEMM adds w * col onto it. */
        for (int f = 0; f < m; f++) {
            float *yf = yb + (size_t)f * n;
            for (int i = 0; i < nb; i++) {
                yf[i] = b[f];
            }
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, nb, k, 1.0f, w, k, workspace, nb, 1.0f, yb, n);
    }
}

void dahl_conv2d_backward_input(const struct dahl_conv2d_shape *s, const float *dy, const float *w, float *dx,
                                float *workspace)
{
    const int f = s->f, n = (int)col_cols(s), k = (int)col_rows(s);
    const int oh_n = dahl_conv2d_out_h(s), ow_n = dahl_conv2d_out_w(s), rows = band_rows(s);
    memset(dx, 0, (size_t)s->c * s->h * s->w * sizeof(float));
    for (int oh0 = 0; oh0 < oh_n; oh0 += rows) {
        const int oh1 = oh0 + rows < oh_n ? oh0 + rows : oh_n;
        const int nb = (oh1 - oh0) * ow_n;
        /* dcol [K][nb] = w^T [K][F] * dy [F][band], then added back onto the input positions. */
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, k, nb, f, 1.0f, w, k, dy + (size_t)oh0 * ow_n, n,
                    0.0f, workspace, nb);
        col2im_add(s, workspace, oh0, oh1, dx);
    }
}

void dahl_conv2d_backward_weights(const struct dahl_conv2d_shape *s, const float *x, const float *dy, float *dw,
                                  float *db, float *workspace)
{
    const int f = s->f, n = (int)col_cols(s), k = (int)col_rows(s);
    const int oh_n = dahl_conv2d_out_h(s), ow_n = dahl_conv2d_out_w(s), rows = band_rows(s);
    for (int oh0 = 0; oh0 < oh_n; oh0 += rows) {
        const int oh1 = oh0 + rows < oh_n ? oh0 + rows : oh_n;
        const int nb = (oh1 - oh0) * ow_n;
        im2col(s, x, oh0, oh1, workspace);
        /* dw [F][K] += dy [F][band] * col^T [nb][K]. */
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, f, k, nb, 1.0f, dy + (size_t)oh0 * ow_n, n,
                    workspace, nb, 1.0f, dw, k);
    }
    for (int i = 0; i < f; i++) {
        const float *dyf = dy + (size_t)i * n;
        double sum = 0.0; /* double: a 512x512 map sums 262144 terms */
        for (int j = 0; j < n; j++) {
            sum += dyf[j];
        }
        db[i] += (float)sum;
    }
}

double dahl_conv2d_forward_flops(const struct dahl_conv2d_shape *s)
{
    const double k = (double)col_rows(s), n = (double)col_cols(s), f = s->f;
    return 2.0 * k * n * f + f * n;
}

double dahl_conv2d_backward_input_flops(const struct dahl_conv2d_shape *s)
{
    const double k = (double)col_rows(s), n = (double)col_cols(s), f = s->f;
    return 2.0 * k * n * f + k * n;
}

double dahl_conv2d_backward_weights_flops(const struct dahl_conv2d_shape *s)
{
    const double k = (double)col_rows(s), n = (double)col_cols(s), f = s->f;
    return 2.0 * k * n * f + f * n;
}

/* Element counts of x, w and y. */
static size_t x_count(const struct dahl_conv2d_shape *s)
{
    return (size_t)s->c * s->h * s->w;
}

static size_t w_count(const struct dahl_conv2d_shape *s)
{
    return (size_t)s->f * col_rows(s);
}

static size_t y_count(const struct dahl_conv2d_shape *s)
{
    return (size_t)s->f * col_cols(s);
}

size_t dahl_conv2d_forward_bytes(const struct dahl_conv2d_shape *s)
{
    return sizeof(float) * (x_count(s) + w_count(s) + (size_t)s->f + y_count(s));
}

size_t dahl_conv2d_backward_input_bytes(const struct dahl_conv2d_shape *s)
{
    return sizeof(float) * (y_count(s) + w_count(s) + x_count(s));
}

size_t dahl_conv2d_backward_weights_bytes(const struct dahl_conv2d_shape *s)
{
    return sizeof(float) * (x_count(s) + y_count(s) + 2 * w_count(s) + 2 * (size_t)s->f);
}
