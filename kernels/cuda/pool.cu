/* Max-pool and average-pool forward and backward of one sample on the GPU (see dahl_maxpool_forward/backward):
 * x [C][H][W], y and dy [C][OH][OW], K x K windows, max-pool padded with -infinity as on the CPU. Each
 * window's argmax is its first maximum in row-major order, as on the CPU. The backward pass is a gather: one
 * thread per input element adds the dy of every window whose argmax it is, windows taken in the CPU's
 * (oh, ow) order, so no atomics are needed and the sums are the CPU's bit for bit. */
#include "dahl_cuda_common.cuh"

/* Offset inside one channel plane of the first maximum of the window with top-left (i0, j0) in padded
 * coordinates, over its part inside the image. */
__device__ static size_t window_argmax(const struct dahl_maxpool_shape s, const float *xc, int i0, int j0)
{
    const int i_lo = max(i0, 0), j_lo = max(j0, 0), i_hi = min(i0 + s.k, s.h), j_hi = min(j0 + s.k, s.w);
    size_t best = (size_t)i_lo * s.w + j_lo;
    float best_v = xc[best];
    for (int i = i_lo; i < i_hi; i++) {
        for (int j = j_lo; j < j_hi; j++) {
            const size_t at = (size_t)i * s.w + j;
            if (xc[at] > best_v) {
                best_v = xc[at];
                best = at;
            }
        }
    }
    return best;
}

/* One thread per output element y[c][oh][ow]. */
__global__ static void maxpool_forward_kernel(const struct dahl_maxpool_shape s, int oh_n, int ow_n, size_t total,
                                              const float *x, float *y)
{
    DAHL_CUDA_FOR(i, total)
    {
        const int ow = (int)(i % ow_n);
        const int oh = (int)(i / ow_n % oh_n);
        const size_t c = i / ((size_t)ow_n * oh_n);
        const float *xc = x + c * s.h * s.w;
        y[i] = xc[window_argmax(s, xc, oh * s.stride - s.pad, ow * s.stride - s.pad)];
    }
}

/* First output index (along one axis) of a window covering input index at, for windows of size k. */
__device__ static int first_window(int at, int k, int stride)
{
    const int lo = at - k + 1;
    return lo <= 0 ? 0 : (lo + stride - 1) / stride;
}

/* One thread per input element dx[c][ih][iw]. */
__global__ static void maxpool_backward_kernel(const struct dahl_maxpool_shape s, int oh_n, int ow_n, size_t total,
                                               const float *x, const float *dy, float *dx)
{
    DAHL_CUDA_FOR(i, total)
    {
        const int iw = (int)(i % s.w);
        const int ih = (int)(i / s.w % s.h);
        const size_t c = i / ((size_t)s.w * s.h);
        const float *xc = x + c * s.h * s.w;
        const float *dyc = dy + c * oh_n * ow_n;
        const size_t self = (size_t)ih * s.w + iw;
        const int ph = ih + s.pad, pw = iw + s.pad; /* in padded coordinates */
        const int oh_hi = min(ph / s.stride, oh_n - 1), ow_hi = min(pw / s.stride, ow_n - 1);
        float acc = 0.0f;
        for (int oh = first_window(ph, s.k, s.stride); oh <= oh_hi; oh++) {
            for (int ow = first_window(pw, s.k, s.stride); ow <= ow_hi; ow++) {
                if (window_argmax(s, xc, oh * s.stride - s.pad, ow * s.stride - s.pad) == self) {
                    acc = __fadd_rn(acc, dyc[(size_t)oh * ow_n + ow]);
                }
            }
        }
        dx[i] = acc;
    }
}

int dahl_cuda_maxpool_forward(const struct dahl_maxpool_shape *s, const float *x, float *y, dahl_cuda_stream stream)
{
    if (!dahl_maxpool_shape_valid(s))
        return dahl_cuda_fail("maxpool forward", "invalid shape");
    const int oh_n = dahl_maxpool_out_h(s), ow_n = dahl_maxpool_out_w(s);
    const size_t total = (size_t)s->c * oh_n * ow_n;
    maxpool_forward_kernel<<<dahl_cuda_blocks(total), DAHL_CUDA_THREADS, 0, stream>>>(*s, oh_n, ow_n, total, x, y);
    return dahl_cuda_check_launch("maxpool forward");
}

int dahl_cuda_maxpool_backward(const struct dahl_maxpool_shape *s, const float *x, const float *dy, float *dx,
                               dahl_cuda_stream stream)
{
    if (!dahl_maxpool_shape_valid(s))
        return dahl_cuda_fail("maxpool backward", "invalid shape");
    const int oh_n = dahl_maxpool_out_h(s), ow_n = dahl_maxpool_out_w(s);
    const size_t total = (size_t)s->c * s->h * s->w;
    maxpool_backward_kernel<<<dahl_cuda_blocks(total), DAHL_CUDA_THREADS, 0, stream>>>(*s, oh_n, ow_n, total, x, dy,
                                                                                          dx);
    return dahl_cuda_check_launch("maxpool backward");
}

/* Average pool: one thread per output element, the window summed in row-major order as on the CPU. */
__global__ static void avgpool_forward_kernel(const struct dahl_maxpool_shape s, int oh_n, int ow_n, size_t total,
                                              const float *x, float *y)
{
    DAHL_CUDA_FOR(i, total)
    {
        const int ow = (int)(i % ow_n);
        const int oh = (int)(i / ow_n % oh_n);
        const size_t c = i / ((size_t)ow_n * oh_n);
        const float *xc = x + c * s.h * s.w;
        float sum = 0.0f;
        for (int a = oh * s.stride; a < oh * s.stride + s.k; a++)
            for (int b = ow * s.stride; b < ow * s.stride + s.k; b++)
                sum = __fadd_rn(sum, xc[(size_t)a * s.w + b]);
        y[i] = __fdiv_rn(sum, (float)(s.k * s.k));
    }
}

/* One thread per input element: the dy / (K*K) of every window covering it, in the CPU's (oh, ow) order. */
__global__ static void avgpool_backward_kernel(const struct dahl_maxpool_shape s, int oh_n, int ow_n, size_t total,
                                               const float *dy, float *dx)
{
    DAHL_CUDA_FOR(i, total)
    {
        const int iw = (int)(i % s.w);
        const int ih = (int)(i / s.w % s.h);
        const size_t c = i / ((size_t)s.w * s.h);
        const float *dyc = dy + c * oh_n * ow_n;
        const float area = (float)(s.k * s.k);
        const int oh_hi = min(ih / s.stride, oh_n - 1), ow_hi = min(iw / s.stride, ow_n - 1);
        float acc = 0.0f;
        for (int oh = first_window(ih, s.k, s.stride); oh <= oh_hi; oh++)
            for (int ow = first_window(iw, s.k, s.stride); ow <= ow_hi; ow++)
                acc = __fadd_rn(acc, __fdiv_rn(dyc[(size_t)oh * ow_n + ow], area));
        dx[i] = acc;
    }
}

int dahl_cuda_avgpool_forward(const struct dahl_maxpool_shape *s, const float *x, float *y, dahl_cuda_stream stream)
{
    if (!dahl_maxpool_shape_valid(s))
        return dahl_cuda_fail("avgpool forward", "invalid shape");
    const int oh_n = dahl_maxpool_out_h(s), ow_n = dahl_maxpool_out_w(s);
    const size_t total = (size_t)s->c * oh_n * ow_n;
    avgpool_forward_kernel<<<dahl_cuda_blocks(total), DAHL_CUDA_THREADS, 0, stream>>>(*s, oh_n, ow_n, total, x, y);
    return dahl_cuda_check_launch("avgpool forward");
}

int dahl_cuda_avgpool_backward(const struct dahl_maxpool_shape *s, const float *dy, float *dx, dahl_cuda_stream stream)
{
    if (!dahl_maxpool_shape_valid(s))
        return dahl_cuda_fail("avgpool backward", "invalid shape");
    const int oh_n = dahl_maxpool_out_h(s), ow_n = dahl_maxpool_out_w(s);
    const size_t total = (size_t)s->c * s->h * s->w;
    avgpool_backward_kernel<<<dahl_cuda_blocks(total), DAHL_CUDA_THREADS, 0, stream>>>(*s, oh_n, ow_n, total, dy, dx);
    return dahl_cuda_check_launch("avgpool backward");
}
