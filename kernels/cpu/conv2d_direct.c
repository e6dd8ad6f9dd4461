/* conv2d forward as a direct convolution with a register-blocked micro-kernel, for stride 1 on x86-64 CPUs
 * that have AVX-512F (16-float vectors, below) or else AVX2 and FMA (8-float vectors), checked at run time;
 * dahl_conv2d_forward falls back to im2col + SGEMM elsewhere. The two kernels give bit-identical outputs.
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

/* ---- AVX-512 ---------------------------------------------------------------------------------------------
 * The same arithmetic on 16-float vectors: each output element is still bias, then one FMA per (c, ki, kj) in
 * that order, so both kernels give bit-identical outputs. With 32 ZMM registers a block holds up to NF512
 * filters x nv vectors (nv <= NV512 = 4; 24 accumulators + 4 inputs + 1 weight). A row's last block has as
 * many vectors as its remaining columns need, the last one masked on load and store: its loads then stop at
 * column OW - 1 + kj, inside the padded row, so the workspace is the AVX2 kernel's. */
enum {
    NF512 = 6,
    NV512 = 4,
    BW512 = 16 * NV512,
};
_Static_assert(NF512 == 6 && NV512 == 4, "block512_any() switches over nf <= 6 and nv <= 4");

__attribute__((target("avx512f"), always_inline)) static inline void
block512(const float *rows, size_t pw, int ckh, const int kw, const float *w, size_t wk, const float *bias,
         const int nf, const int nv, __mmask16 last, float *out, size_t out_stride)
{
    __m512 acc[NF512][NV512];
#pragma GCC unroll 8
    for (int i = 0; i < nf; i++) {
#pragma GCC unroll 8
        for (int v = 0; v < nv; v++) {
            acc[i][v] = _mm512_set1_ps(bias[i]);
        }
    }
    for (int r = 0; r < ckh; r++) {
        const float *row = rows + (size_t)r * pw;
        const float *wr = w + (size_t)r * kw;
        for (int kj = 0; kj < kw; kj++) {
            __m512 in[NV512];
#pragma GCC unroll 8
            for (int v = 0; v < nv; v++) {
                in[v] = v == nv - 1 ? _mm512_maskz_loadu_ps(last, row + kj + 16 * v) : _mm512_loadu_ps(row + kj + 16 * v);
            }
#pragma GCC unroll 8
            for (int i = 0; i < nf; i++) {
                const __m512 wv = _mm512_set1_ps(wr[(size_t)i * wk + kj]);
#pragma GCC unroll 8
                for (int v = 0; v < nv; v++) {
                    acc[i][v] = _mm512_fmadd_ps(wv, in[v], acc[i][v]);
                }
            }
        }
    }
#pragma GCC unroll 8
    for (int i = 0; i < nf; i++) {
#pragma GCC unroll 8
        for (int v = 0; v < nv; v++) {
            float *dst = out + (size_t)i * out_stride + 16 * v;
            if (v == nv - 1) {
                _mm512_mask_storeu_ps(dst, last, acc[i][v]);
            } else {
                _mm512_storeu_ps(dst, acc[i][v]);
            }
        }
    }
}

/* block512() for a run-time nf, nv and kw, each made a constant (kw for 3 and 5 only). */
__attribute__((target("avx512f"))) static void block512_any(const float *rows, size_t pw, int ckh, int kw,
                                                            const float *w, size_t wk, const float *bias, int nf,
                                                            int nv, __mmask16 last, float *out, size_t out_stride)
{
#define B512(KW, NF, NV) block512(rows, pw, ckh, KW, w, wk, bias, NF, NV, last, out, out_stride); return;
#define B512_NV(KW, NF)                                                                                       \
    switch (nv) {                                                                                             \
    case 4: B512(KW, NF, 4)                                                                                   \
    case 3: B512(KW, NF, 3)                                                                                   \
    case 2: B512(KW, NF, 2)                                                                                   \
    default: B512(KW, NF, 1)                                                                                  \
    }
#define B512_NF(KW)                                                                                           \
    switch (nf) {                                                                                             \
    case 6: B512_NV(KW, 6)                                                                                    \
    case 5: B512_NV(KW, 5)                                                                                    \
    case 4: B512_NV(KW, 4)                                                                                    \
    case 3: B512_NV(KW, 3)                                                                                    \
    case 2: B512_NV(KW, 2)                                                                                    \
    default: B512_NV(KW, 1)                                                                                   \
    }
    switch (kw) {
    case 3: B512_NF(3)
    case 5: B512_NF(5)
    default: B512_NF(kw)
    }
#undef B512_NF
#undef B512_NV
#undef B512
}

__attribute__((target("avx512f"))) static void forward_avx512(const struct dahl_conv2d_shape *s, const float *x,
                                                              const float *w, const float *b, float *y,
                                                              float *workspace)
{
    const int oh_n = dahl_conv2d_out_h(s), ow_n = dahl_conv2d_out_w(s);
    const size_t pw = padded_w(s), plane = (size_t)oh_n * ow_n;
    const size_t wk = (size_t)s->c * s->kh * s->kw;
    const int ckh = s->c * s->kh;
    /* Blocks as wide as the row needs, up to BW512: a 28-column row is one block of 2 vectors. */
    const int nv_full = ow_n >= BW512 ? NV512 : (ow_n + 15) / 16;
    const int bw = 16 * nv_full;
    for (int oh = 0; oh < oh_n; oh++) {
        fill_rows(s, x, oh, workspace);
        for (int f0 = 0; f0 < s->f; f0 += NF512) {
            const int nf = s->f - f0 < NF512 ? s->f - f0 : NF512;
            float *yrow = y + (size_t)f0 * plane + (size_t)oh * ow_n;
            for (int ow0 = 0; ow0 < ow_n; ow0 += bw) {
                const int cols = ow_n - ow0 < bw ? ow_n - ow0 : bw;
                const int nv = (cols + 15) / 16, tail = cols - 16 * (nv - 1);
                const __mmask16 last = (__mmask16)(tail == 16 ? 0xffffu : (1u << tail) - 1u);
                block512_any(workspace + ow0, pw, ckh, s->kw, w + (size_t)f0 * wk, wk, b + f0, nf, nv, last,
                             yrow + ow0, plane);
            }
        }
    }
}

int dahl_conv2d_direct_vector_bits(void)
{
    if (__builtin_cpu_supports("avx512f")) {
        return 512;
    }
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? 256 : 0;
}

bool dahl_conv2d_direct_available(const struct dahl_conv2d_shape *s)
{
    return s->stride == 1 && dahl_conv2d_direct_vector_bits() > 0;
}

bool dahl_conv2d_forward_direct_bits(const struct dahl_conv2d_shape *s, int bits, const float *x, const float *w,
                                     const float *b, float *y, float *workspace)
{
    if (s->stride != 1 || bits > dahl_conv2d_direct_vector_bits() || (bits != 256 && bits != 512) ||
        (bits == 256 && !(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")))) {
        return false;
    }
    if (bits == 512) {
        forward_avx512(s, x, w, b, y, workspace);
    } else {
        forward_avx2(s, x, w, b, y, workspace);
    }
    return true;
}

bool dahl_conv2d_forward_direct(const struct dahl_conv2d_shape *s, const float *x, const float *w, const float *b,
                                float *y, float *workspace)
{
    return dahl_conv2d_forward_direct_bits(s, dahl_conv2d_direct_vector_bits(), x, w, b, y, workspace);
}

#else /* !DIRECT_COMPILED */

int dahl_conv2d_direct_vector_bits(void)
{
    return 0;
}

bool dahl_conv2d_forward_direct_bits(const struct dahl_conv2d_shape *s, int bits, const float *x, const float *w,
                                     const float *b, float *y, float *workspace)
{
    (void)s, (void)bits, (void)x, (void)w, (void)b, (void)y, (void)workspace;
    return false;
}

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
