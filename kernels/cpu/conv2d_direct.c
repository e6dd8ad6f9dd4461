/* conv2d forward as a direct convolution with an AVX2/FMA register-blocked micro-kernel, for stride 1 on
 * x86-64 CPUs that have AVX2 and FMA (checked at run time; dahl_conv2d_forward falls back to im2col + SGEMM
 * elsewhere).
 *
 * Why: im2col + SGEMM turns a 3-channel 3x3 convolution into a GEMM with M = F (16) and K = C*KH*KW (27): a
 * skinny product on which single-core OpenBLAS reaches a third of its square-GEMM speed, after im2col has
 * copied every input pixel KH*KW times. The direct loop reads each padded input row in place instead.
 *
 * Blocking: one output row at a time. The C*KH input rows it needs are first copied, zero-padded, into the
 * workspace (pw floats each, pw = OW rounded up to a whole block + KW - 1, so blocks never read past a row
 * and the padding costs no branch). Then for each block of NF filters x BW output columns, NF*NV accumulator
 * registers (8 floats each) start at the bias and gather, for every (c, ki, kj) in that order, one FMA of a
 * broadcast weight and an unaligned load of the input row shifted by kj. Per (c, ki, kj): NV loads and NF
 * broadcasts for NF*NV FMAs. With NF = 4 and NV = 3 that is 12 accumulators + 3 inputs + 1 weight = the 16
 * YMM registers. */
#include "dahl_kernels.h"

#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define DIRECT_COMPILED 1
#include <immintrin.h>
#else
#define DIRECT_COMPILED 0
#endif

enum {
    NF = 4,      /* filters per block */
    NV = 3,      /* 8-float vectors per block */
    BW = 8 * NV, /* output columns per block */
};

/* Floats in one padded input row of the workspace. */
static size_t padded_w(const struct dahl_conv2d_shape *s)
{
    const size_t ow_n = (size_t)dahl_conv2d_out_w(s);
    return (ow_n + BW - 1) / BW * BW + (size_t)s->kw - 1;
}

size_t dahl_conv2d_direct_workspace_bytes(const struct dahl_conv2d_shape *s)
{
    return (size_t)s->c * (size_t)s->kh * padded_w(s) * sizeof(float);
}

#if DIRECT_COMPILED

/* Copies, zero-padded, the C*KH input rows output row oh reads: rows[(c*KH + ki)*pw + j] = x[c][ih][j - pad]
 * with ih = oh - pad + ki, or 0 where (ih, j - pad) lies outside the image. */
static void fill_rows(const struct dahl_conv2d_shape *s, const float *x, int oh, float *rows)
{
    const size_t pw = padded_w(s);
    for (int c = 0; c < s->c; c++) {
        for (int ki = 0; ki < s->kh; ki++) {
            float *dst = rows + ((size_t)c * s->kh + ki) * pw;
            const int ih = oh - s->pad + ki;
            if (ih < 0 || ih >= s->h) {
                memset(dst, 0, pw * sizeof(float));
                continue;
            }
            /* pw >= OW + KW - 1 = W + 2*pad, so the copied row and its left padding always fit. */
            memset(dst, 0, (size_t)s->pad * sizeof(float));
            memcpy(dst + s->pad, x + ((size_t)c * s->h + ih) * s->w, (size_t)s->w * sizeof(float));
            memset(dst + s->pad + s->w, 0, (pw - (size_t)s->pad - (size_t)s->w) * sizeof(float));
        }
    }
}

/* One block: out[i][0..BW) = bias[i] + sum over r < ckh, kj < kw of w[i*wk + r*kw + kj] * rows[r*pw + kj + ..]
 * for the nf <= NF filters i. Inlined with constant nf (and kw where possible), so the dead filters vanish and
 * the accumulators, named one by one rather than kept in an array, stay in registers. */
#define ACC_INIT(i)                                                                                           \
    __m256 a##i##0 = _mm256_setzero_ps(), a##i##1 = a##i##0, a##i##2 = a##i##0;                               \
    if (nf > (i)) {                                                                                           \
        a##i##0 = a##i##1 = a##i##2 = _mm256_set1_ps(bias[i]);                                                \
    }
#define ACC_FMA(i)                                                                                            \
    if (nf > (i)) {                                                                                           \
        const __m256 wv = _mm256_broadcast_ss(wr + (size_t)(i) * wk + kj);                                    \
        a##i##0 = _mm256_fmadd_ps(wv, in0, a##i##0);                                                          \
        a##i##1 = _mm256_fmadd_ps(wv, in1, a##i##1);                                                          \
        a##i##2 = _mm256_fmadd_ps(wv, in2, a##i##2);                                                          \
    }
#define ACC_STORE(i)                                                                                          \
    if (nf > (i)) {                                                                                           \
        _mm256_storeu_ps(out + (i) * out_stride, a##i##0);                                                    \
        _mm256_storeu_ps(out + (i) * out_stride + 8, a##i##1);                                                \
        _mm256_storeu_ps(out + (i) * out_stride + 16, a##i##2);                                               \
    }
_Static_assert(NF == 4 && NV == 3, "block() names NF x NV accumulators one by one");

__attribute__((target("avx2,fma"), always_inline)) static inline void
block(const float *rows, size_t pw, int ckh, const int kw, const float *w, size_t wk, const float *bias,
      const int nf, float *out, size_t out_stride)
{
    ACC_INIT(0)
    ACC_INIT(1)
    ACC_INIT(2)
    ACC_INIT(3)
    for (int r = 0; r < ckh; r++) {
        const float *row = rows + (size_t)r * pw;
        const float *wr = w + (size_t)r * kw;
        for (int kj = 0; kj < kw; kj++) {
            const __m256 in0 = _mm256_loadu_ps(row + kj);
            const __m256 in1 = _mm256_loadu_ps(row + kj + 8);
            const __m256 in2 = _mm256_loadu_ps(row + kj + 16);
            ACC_FMA(0)
            ACC_FMA(1)
            ACC_FMA(2)
            ACC_FMA(3)
        }
    }
    ACC_STORE(0)
    ACC_STORE(1)
    ACC_STORE(2)
    ACC_STORE(3)
}
#undef ACC_INIT
#undef ACC_FMA
#undef ACC_STORE

/* block() for a run-time nf and kw: nf is made a constant, and so is kw for the widths the networks use
 * (others run the same arithmetic with the kj loop not unrolled). */
__attribute__((target("avx2,fma"))) static void block_any(const float *rows, size_t pw, int ckh, int kw,
                                                          const float *w, size_t wk, const float *bias, int nf,
                                                          float *out, size_t out_stride)
{
#define BLOCK_NF(KW)                                                                                          \
    switch (nf) {                                                                                             \
    case 4: block(rows, pw, ckh, KW, w, wk, bias, 4, out, out_stride); return;                                            \
    case 3: block(rows, pw, ckh, KW, w, wk, bias, 3, out, out_stride); return;                                            \
    case 2: block(rows, pw, ckh, KW, w, wk, bias, 2, out, out_stride); return;                                            \
    default: block(rows, pw, ckh, KW, w, wk, bias, 1, out, out_stride); return;                                           \
    }
    switch (kw) {
    case 3: BLOCK_NF(3)
    case 5: BLOCK_NF(5)
    default: BLOCK_NF(kw)
    }
#undef BLOCK_NF
}

__attribute__((target("avx2,fma"))) static void forward_avx2(const struct dahl_conv2d_shape *s, const float *x,
                                                             const float *w, const float *b, float *y,
                                                             float *workspace)
{
    const int oh_n = dahl_conv2d_out_h(s), ow_n = dahl_conv2d_out_w(s);
    const size_t pw = padded_w(s), plane = (size_t)oh_n * ow_n;
    const size_t wk = (size_t)s->c * s->kh * s->kw;
    const int ckh = s->c * s->kh;
    float tail[NF * BW];
    for (int oh = 0; oh < oh_n; oh++) {
        fill_rows(s, x, oh, workspace);
        for (int f0 = 0; f0 < s->f; f0 += NF) {
            const int nf = s->f - f0 < NF ? s->f - f0 : NF;
            float *yrow = y + (size_t)f0 * plane + (size_t)oh * ow_n;
            int ow0 = 0;
            for (; ow0 + BW <= ow_n; ow0 += BW) {
                block_any(workspace + ow0, pw, ckh, s->kw, w + (size_t)f0 * wk, wk, b + f0, nf, yrow + ow0, plane);
            }
            if (ow0 < ow_n) {
                /* The last, partial block goes through tail, then its valid columns to y. */
                block_any(workspace + ow0, pw, ckh, s->kw, w + (size_t)f0 * wk, wk, b + f0, nf, tail, BW);
                for (int i = 0; i < nf; i++) {
                    memcpy(yrow + (size_t)i * plane + ow0, tail + (size_t)i * BW, (size_t)(ow_n - ow0) * sizeof(float));
                }
            }
        }
    }
}

bool dahl_conv2d_direct_available(const struct dahl_conv2d_shape *s)
{
    return s->stride == 1 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

bool dahl_conv2d_forward_direct(const struct dahl_conv2d_shape *s, const float *x, const float *w, const float *b,
                                float *y, float *workspace)
{
    if (!dahl_conv2d_direct_available(s)) {
        return false;
    }
    forward_avx2(s, x, w, b, y, workspace);
    return true;
}

#else /* !DIRECT_COMPILED */

bool dahl_conv2d_direct_available(const struct dahl_conv2d_shape *s)
{
    (void)s;
    return false;
}

bool dahl_conv2d_forward_direct(const struct dahl_conv2d_shape *s, const float *x, const float *w, const float *b,
                                float *y, float *workspace)
{
    (void)s, (void)x, (void)w, (void)b, (void)y, (void)workspace;
    return false;
}

#endif
