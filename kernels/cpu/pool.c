/* Max-pool and average-pool forward and backward for one sample: x [C][H][W] -> y [C][OH][OW], K x K windows,
 * max-pool with -infinity padding (a window's maximum is over its part inside the image), average-pool none.
 * The max-pool backward pass recomputes each window's argmax from x instead of keeping indices from the
 * forward pass, so no index tensor has to live between the two tasks. */
#include "dahl_kernels.h"

#include <string.h>

bool dahl_maxpool_shape_valid(const struct dahl_maxpool_shape *s)
{
    return s->c > 0 && s->h > 0 && s->w > 0 && s->k > 0 && s->stride > 0 && s->pad >= 0 && 2 * s->pad <= s->k &&
           s->h + 2 * s->pad >= s->k && s->w + 2 * s->pad >= s->k;
}

int dahl_maxpool_out_h(const struct dahl_maxpool_shape *s)
{
    return (s->h + 2 * s->pad - s->k) / s->stride + 1;
}

int dahl_maxpool_out_w(const struct dahl_maxpool_shape *s)
{
    return (s->w + 2 * s->pad - s->k) / s->stride + 1;
}

/* Offset inside xc of the first maximum, in row-major order, of the window whose top-left is (i0, j0) in
 * padded coordinates (i0 = oh * stride - pad): over its part inside the image, never empty as pad <= k / 2. */
static size_t window_argmax(const struct dahl_maxpool_shape *s, const float *xc, int i0, int j0)
{
    const int i_lo = i0 > 0 ? i0 : 0, j_lo = j0 > 0 ? j0 : 0;
    const int i_hi = i0 + s->k < s->h ? i0 + s->k : s->h, j_hi = j0 + s->k < s->w ? j0 + s->k : s->w;
    size_t best = (size_t)i_lo * s->w + j_lo;
    float best_v = xc[best];
    for (int i = i_lo; i < i_hi; i++) {
        for (int j = j_lo; j < j_hi; j++) {
            /* Selects rather than a branch: which element wins is data, and a mispredicted jump per
             * comparison made the kernel's time depend on the images (see relu.c). */
            const size_t at = (size_t)i * s->w + j;
            const float v = xc[at];
            const bool gt = v > best_v;
            best = gt ? at : best;
            best_v = gt ? v : best_v;
        }
    }
    return best;
}

void dahl_maxpool_forward(const struct dahl_maxpool_shape *s, const float *x, float *y)
{
    const int oh_n = dahl_maxpool_out_h(s), ow_n = dahl_maxpool_out_w(s);
    for (int c = 0; c < s->c; c++) {
        const float *xc = x + (size_t)c * s->h * s->w;
        for (int oh = 0; oh < oh_n; oh++) {
            for (int ow = 0; ow < ow_n; ow++) {
                *y++ = xc[window_argmax(s, xc, oh * s->stride - s->pad, ow * s->stride - s->pad)];
            }
        }
    }
}

void dahl_maxpool_backward(const struct dahl_maxpool_shape *s, const float *x, const float *dy, float *dx)
{
    const int oh_n = dahl_maxpool_out_h(s), ow_n = dahl_maxpool_out_w(s);
    memset(dx, 0, (size_t)s->c * s->h * s->w * sizeof(float));
    for (int c = 0; c < s->c; c++) {
        const size_t plane = (size_t)c * s->h * s->w;
        for (int oh = 0; oh < oh_n; oh++) {
            for (int ow = 0; ow < ow_n; ow++) {
                dx[plane + window_argmax(s, x + plane, oh * s->stride - s->pad, ow * s->stride - s->pad)] += *dy++;
            }
        }
    }
}

static double windows(const struct dahl_maxpool_shape *s)
{
    return (double)s->c * dahl_maxpool_out_h(s) * dahl_maxpool_out_w(s);
}

double dahl_maxpool_forward_flops(const struct dahl_maxpool_shape *s)
{
    return windows(s) * ((double)s->k * s->k - 1.0);
}

double dahl_maxpool_backward_flops(const struct dahl_maxpool_shape *s)
{
    return windows(s) * ((double)s->k * s->k - 1.0) + windows(s);
}

size_t dahl_maxpool_forward_bytes(const struct dahl_maxpool_shape *s)
{
    const size_t in = (size_t)s->c * s->h * s->w;
    const size_t out = (size_t)s->c * dahl_maxpool_out_h(s) * dahl_maxpool_out_w(s);
    return sizeof(float) * (in + out);
}

size_t dahl_maxpool_backward_bytes(const struct dahl_maxpool_shape *s)
{
    const size_t in = (size_t)s->c * s->h * s->w;
    const size_t out = (size_t)s->c * dahl_maxpool_out_h(s) * dahl_maxpool_out_w(s);
    return sizeof(float) * (2 * in + out);
}

void dahl_avgpool_forward(const struct dahl_maxpool_shape *s, const float *x, float *y)
{
    const int oh_n = dahl_maxpool_out_h(s), ow_n = dahl_maxpool_out_w(s);
    const float area = (float)(s->k * s->k);
    for (int c = 0; c < s->c; c++) {
        const float *xc = x + (size_t)c * s->h * s->w;
        for (int oh = 0; oh < oh_n; oh++) {
            for (int ow = 0; ow < ow_n; ow++) {
                float sum = 0.0f;
                for (int i = oh * s->stride; i < oh * s->stride + s->k; i++)
                    for (int j = ow * s->stride; j < ow * s->stride + s->k; j++)
                        sum += xc[(size_t)i * s->w + j];
                *y++ = sum / area;
            }
        }
    }
}

/* The first window (along one axis) that covers input position `at`. */
static int first_window(int at, int k, int stride)
{
    const int lo = at - k + 1;
    return lo <= 0 ? 0 : (lo + stride - 1) / stride;
}

void dahl_avgpool_backward(const struct dahl_maxpool_shape *s, const float *dy, float *dx)
{
    const int oh_n = dahl_maxpool_out_h(s), ow_n = dahl_maxpool_out_w(s);
    const float area = (float)(s->k * s->k);
    for (int c = 0; c < s->c; c++) {
        const float *dyc = dy + (size_t)c * oh_n * ow_n;
        for (int ih = 0; ih < s->h; ih++) {
            const int oh_hi = ih / s->stride < oh_n - 1 ? ih / s->stride : oh_n - 1;
            for (int iw = 0; iw < s->w; iw++) {
                const int ow_hi = iw / s->stride < ow_n - 1 ? iw / s->stride : ow_n - 1;
                float acc = 0.0f;
                for (int oh = first_window(ih, s->k, s->stride); oh <= oh_hi; oh++)
                    for (int ow = first_window(iw, s->k, s->stride); ow <= ow_hi; ow++)
                        acc += dyc[(size_t)oh * ow_n + ow] / area;
                *dx++ = acc;
            }
        }
    }
}

double dahl_avgpool_forward_flops(const struct dahl_maxpool_shape *s)
{
    return windows(s) * (double)s->k * s->k;
}

double dahl_avgpool_backward_flops(const struct dahl_maxpool_shape *s)
{
    return windows(s) * ((double)s->k * s->k + 1.0);
}

size_t dahl_avgpool_forward_bytes(const struct dahl_maxpool_shape *s)
{
    return dahl_maxpool_forward_bytes(s);
}

size_t dahl_avgpool_backward_bytes(const struct dahl_maxpool_shape *s)
{
    const size_t in = (size_t)s->c * s->h * s->w;
    const size_t out = (size_t)s->c * dahl_maxpool_out_h(s) * dahl_maxpool_out_w(s);
    return sizeof(float) * (in + out);
}
