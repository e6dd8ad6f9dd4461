/* Dense (fully connected) layer over n samples at once: x [n][N_in], w [N_out][N_in] row-major, b [N_out],
 * y [n][N_out]. One call serves a task over a group of samples (the training's grain, issue 21).
 *
 * Why not BLAS: per sample, GEMV and GER stream all of w from memory once per sample; for a large layer (at
 * 512x512x3 LeNet's first dense layer holds 30 M weights, 122 MB) that traffic is the layer's whole cost. Here
 * forward and backward_input read each weight once per block of DENSE_BLOCK samples, and backward_weights
 * reads and writes each gradient once per call. SGEMM would do the same, but it adds up its products in an
 * order that depends on n; these loops give every output element the same operations in the same order
 * whatever n is, so a task over n samples computes exactly what n one-sample tasks compute.
 *
 * The arithmetic, per element: forward y[s][o] = (sum16(acc) + tail) + b[o], acc lane l holding
 * w[o][i] * x[s][i] summed over i = l mod 16 in ascending i, sum16 a fixed pairwise tree, tail the last
 * N_in mod 16 products summed in order; backward_input dx[s][i] = sum over o ascending of w[o][i] * dy[s][o];
 * backward_weights adds dy[s][o] * x[s][i] for s ascending (or, _tree, the samples' products combined by
 * the binary tree of dahl_group_grads_run). Multiplications and additions are separate (ISO C: no FMA
 * contraction), and GCC's vector extensions keep the lanes' order whatever the instruction set: the AVX-512,
 * AVX2 and baseline builds below give the same bits. */
#include "dahl_kernels.h"

#include <string.h>

enum {
    DENSE_LANES = 16, /* floats per vector (v16) */
    DENSE_BLOCK = 4,  /* samples sharing one read of w in forward and backward_input */
    DENSE_ROWS = 4,   /* outputs (forward) or input vectors (backward_input) computed side by side */
    DENSE_TILE = 65536, /* floats of x per tile of backward_weights, over the task's samples (256 KB) */
    DENSE_TREE = 33,  /* levels of the binary tree over at most 2^32 samples */
};

typedef float v16 __attribute__((vector_size(DENSE_LANES * sizeof(float))));

/* The binary tree of dahl_group_grads_run over a task's samples, on one element (float) or 16 (v16): each
 * sample's product is pushed as a level of size 1, two equal neighbours merge (lower += higher); after the
 * last sample the unequal levels fold from the top down. */
#define TREE_PUSH(level, size, top, value)                                                                    \
    do {                                                                                                      \
        (level)[top] = (value);                                                                               \
        (size)[(top)++] = 1;                                                                                  \
        while ((top) >= 2 && (size)[(top)-1] == (size)[(top)-2]) {                                            \
            (level)[(top)-2] += (level)[(top)-1];                                                             \
            (size)[(top)-2] *= 2;                                                                             \
            (top)--;                                                                                          \
        }                                                                                                     \
    } while (0)
#define TREE_FOLD(level, top)                                                                                 \
    for (; (top) >= 2; (top)--)                                                                               \
        (level)[(top)-2] += (level)[(top)-1]

/* Unaligned vector loads and stores, as macros: a function passing v16 by value would cross the
 * baseline's ABI (clang refuses it outside an AVX-512 context). */
#define LOAD16(dst, p) memcpy(&(dst), (p), sizeof(v16))
#define STORE16(p, v) memcpy((p), &(v), sizeof(v16))

/* The 16 lanes summed by a fixed pairwise tree: lane l + 8 onto lane l, then l + 4 onto l, l + 2, l + 1,
 * each step one vector addition of halves. */
typedef float v8 __attribute__((vector_size(8 * sizeof(float))));
typedef float v4 __attribute__((vector_size(4 * sizeof(float))));
static inline __attribute__((always_inline)) float sum16(const v16 *v)
{
    v8 a8, b8;
    memcpy(&a8, v, sizeof(a8));
    memcpy(&b8, (const char *)v + sizeof(a8), sizeof(b8));
    a8 += b8;
    v4 a4, b4;
    memcpy(&a4, &a8, sizeof(a4));
    memcpy(&b4, (const char *)&a8 + sizeof(a4), sizeof(b4));
    a4 += b4;
    const float t0 = a4[0] + a4[2], t1 = a4[1] + a4[3];
    return t0 + t1;
}

/* y of samples [0, ns) for outputs [o, o + nr) (ns <= DENSE_BLOCK, nr <= DENSE_ROWS: constants once inlined):
 * nr x ns independent accumulators, so that neither one sample nor one output waits on a single chain of
 * additions; each weight vector loaded once for the ns samples. */
static inline __attribute__((always_inline)) void forward_block(size_t ni, size_t no, int nr, int ns, const float *x,
                                                                const float *w, const float *b, size_t o, float *y)
{
    const size_t full = ni / DENSE_LANES * DENSE_LANES;
    v16 acc[DENSE_ROWS][DENSE_BLOCK];
#pragma GCC unroll 4
    for (int r = 0; r < nr; r++)
#pragma GCC unroll 4
        for (int s = 0; s < ns; s++)
            acc[r][s] = (v16){0};
    for (size_t i = 0; i < full; i += DENSE_LANES) {
        v16 wv[DENSE_ROWS];
#pragma GCC unroll 4
        for (int r = 0; r < nr; r++)
            LOAD16(wv[r], w + (o + (size_t)r) * ni + i);
#pragma GCC unroll 4
        for (int s = 0; s < ns; s++) {
            v16 xv;
            LOAD16(xv, x + (size_t)s * ni + i);
#pragma GCC unroll 4
            for (int r = 0; r < nr; r++)
                acc[r][s] += wv[r] * xv;
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < nr; r++) {
        const float *wr = w + (o + (size_t)r) * ni;
#pragma GCC unroll 4
        for (int s = 0; s < ns; s++) {
            float tail = 0.0f;
            for (size_t i = full; i < ni; i++)
                tail += wr[i] * x[(size_t)s * ni + i];
            y[(size_t)s * no + o + (size_t)r] = (sum16(&acc[r][s]) + tail) + b[o + (size_t)r];
        }
    }
}

/* dx of samples [0, ns) for inputs [i, i + 16 nc) (nc <= DENSE_ROWS vectors; constants once inlined): over
 * the outputs in order, nc x ns independent accumulators. */
static inline __attribute__((always_inline)) void backward_input_block(size_t ni, size_t no, int nc, int ns,
                                                                       const float *dy, const float *w, size_t i,
                                                                       float *dx)
{
    v16 acc[DENSE_ROWS][DENSE_BLOCK];
#pragma GCC unroll 4
    for (int c = 0; c < nc; c++)
#pragma GCC unroll 4
        for (int s = 0; s < ns; s++)
            acc[c][s] = (v16){0};
    for (size_t o = 0; o < no; o++) {
#pragma GCC unroll 4
        for (int c = 0; c < nc; c++) {
            v16 wv;
            LOAD16(wv, w + o * ni + i + (size_t)c * DENSE_LANES);
#pragma GCC unroll 4
            for (int s = 0; s < ns; s++)
                acc[c][s] += wv * dy[(size_t)s * no + o];
        }
    }
#pragma GCC unroll 4
    for (int c = 0; c < nc; c++)
#pragma GCC unroll 4
        for (int s = 0; s < ns; s++)
            STORE16(dx + (size_t)s * ni + i + (size_t)c * DENSE_LANES, acc[c][s]);
}

/* dw[o][i, i + 16 nc) += dy[s][o] x[s][...] for s ascending (nc <= DENSE_ROWS, a constant once inlined):
 * nc independent chains; each gradient vector read and written once for the n samples. */
static inline __attribute__((always_inline)) void weights_seq_block(size_t ni, size_t no, int nc, int n,
                                                                    const float *x, const float *dy, size_t o,
                                                                    size_t i, float *row)
{
    v16 d[DENSE_ROWS];
#pragma GCC unroll 4
    for (int c = 0; c < nc; c++)
        LOAD16(d[c], row + i + (size_t)c * DENSE_LANES);
    for (int s = 0; s < n; s++) {
        const float g = dy[(size_t)s * no + o];
#pragma GCC unroll 4
        for (int c = 0; c < nc; c++) {
            v16 xv;
            LOAD16(xv, x + (size_t)s * ni + i + (size_t)c * DENSE_LANES);
            d[c] += g * xv;
        }
    }
#pragma GCC unroll 4
    for (int c = 0; c < nc; c++)
        STORE16(row + i + (size_t)c * DENSE_LANES, d[c]);
}

/* backward_input's last N_in mod 16 inputs, in scalars, in the same order. */
static void backward_input_tail(size_t ni, size_t no, int ns, const float *dy, const float *w, float *dx)
{
    for (size_t i = ni / DENSE_LANES * DENSE_LANES; i < ni; i++) {
        for (int s = 0; s < ns; s++) {
            float acc = 0.0f;
            for (size_t o = 0; o < no; o++)
                acc += w[o * ni + i] * dy[(size_t)s * no + o];
            dx[(size_t)s * ni + i] = acc;
        }
    }
}

/* One gradient element's update, in scalars: what a lane of backward_weights does. */
static float tree_or_sum(int n, size_t no, size_t ni, size_t o, size_t i, const float *x, const float *dy,
                         float d, bool tree)
{
    if (!tree) {
        for (int s = 0; s < n; s++)
            d += dy[(size_t)s * no + o] * x[(size_t)s * ni + i];
        return d;
    }
    float level[DENSE_TREE];
    int size[DENSE_TREE], top = 0;
    for (int s = 0; s < n; s++)
        TREE_PUSH(level, size, top, dy[(size_t)s * no + o] * x[(size_t)s * ni + i]);
    TREE_FOLD(level, top);
    return d + level[0];
}

/* The blocks DENSE_FOR_NS instantiates inside the variants below (their ni, no, xs/dys, w, b, o/i, ys/dxs):
 * the sample count made a constant for each block size, so that the accumulators stay in registers. */
#define FORWARD_ROWS_OF_4(NS) forward_block(ni, no, DENSE_ROWS, NS, xs, w, b, o, ys)
#define FORWARD_ROW(NS) forward_block(ni, no, 1, NS, xs, w, b, o, ys)
#define INPUT_COLS_OF_4(NS) backward_input_block(ni, no, DENSE_ROWS, NS, dys, w, i, dxs)
#define INPUT_COLS(NS) backward_input_block(ni, no, 1, NS, dys, w, i, dxs)

/* Per sample count ns (1 to DENSE_BLOCK), BODY(NS) with NS a constant. */
#define DENSE_FOR_NS(ns, BODY)                                                                                \
    switch (ns) {                                                                                             \
    case 4: BODY(4); break;                                                                                   \
    case 3: BODY(3); break;                                                                                   \
    case 2: BODY(2); break;                                                                                   \
    default: BODY(1); break;                                                                                  \
    }
_Static_assert(DENSE_BLOCK == 4 && DENSE_ROWS == 4, "DENSE_FOR_NS and the variants' blocks of 4");

/* The kernels' bodies, compiled once per instruction set. */
#define DENSE_VARIANT(SUFFIX, TARGET)                                                                         \
    TARGET static void forward_##SUFFIX(size_t ni, size_t no, int n, const float *x, const float *w,         \
                                        const float *b, float *y)                                           \
    {                                                                                                       \
        for (int s0 = 0; s0 < n; s0 += DENSE_BLOCK) {                                                       \
            const int ns = n - s0 < DENSE_BLOCK ? n - s0 : DENSE_BLOCK;                                     \
            const float *xs = x + (size_t)s0 * ni;                                                          \
            float *ys = y + (size_t)s0 * no;                                                                \
            size_t o = 0;                                                                                   \
            for (; o + DENSE_ROWS <= no; o += DENSE_ROWS) {                                                 \
                DENSE_FOR_NS(ns, FORWARD_ROWS_OF_4)                                                         \
            }                                                                                               \
            for (; o < no; o++) {                                                                           \
                DENSE_FOR_NS(ns, FORWARD_ROW)                                                               \
            }                                                                                               \
        }                                                                                                   \
    }                                                                                                       \
    TARGET static void backward_input_##SUFFIX(size_t ni, size_t no, int n, const float *dy, const float *w, \
                                               float *dx)                                                   \
    {                                                                                                       \
        const size_t full = ni / DENSE_LANES * DENSE_LANES;                                                 \
        for (int s0 = 0; s0 < n; s0 += DENSE_BLOCK) {                                                       \
            const int ns = n - s0 < DENSE_BLOCK ? n - s0 : DENSE_BLOCK;                                     \
            const float *dys = dy + (size_t)s0 * no;                                                        \
            float *dxs = dx + (size_t)s0 * ni;                                                              \
            size_t i = 0;                                                                                   \
            for (; i + DENSE_ROWS * DENSE_LANES <= full; i += DENSE_ROWS * DENSE_LANES) {                   \
                DENSE_FOR_NS(ns, INPUT_COLS_OF_4)                                                           \
            }                                                                                               \
            for (; i < full; i += DENSE_LANES) {                                                            \
                DENSE_FOR_NS(ns, INPUT_COLS)                                                                \
            }                                                                                               \
            backward_input_tail(ni, no, ns, dys, w, dxs);                                                   \
        }                                                                                                   \
    }                                                                                                       \
    TARGET static void backward_weights_##SUFFIX(size_t ni, size_t no, int n, const float *x,                \
                                                 const float *dy, float *dw, bool tree)                     \
    {                                                                                                       \
        const size_t full = ni / DENSE_LANES * DENSE_LANES;                                                 \
        if (!tree) {                                                                                        \
            /* tiles of DENSE_TILE / n inputs, every output's row segment in turn: x's tile stays in cache */ \
            size_t tile = DENSE_TILE / (size_t)n / (DENSE_ROWS * DENSE_LANES) * (DENSE_ROWS * DENSE_LANES); \
            tile = tile > 0 ? tile : DENSE_ROWS * DENSE_LANES;                                              \
            for (size_t t = 0; t < full; t += tile) {                                                       \
                const size_t end = full - t < tile ? full : t + tile;                                       \
                for (size_t o = 0; o < no; o++) {                                                           \
                    size_t i = t;                                                                           \
                    for (; i + DENSE_ROWS * DENSE_LANES <= end; i += DENSE_ROWS * DENSE_LANES)              \
                        weights_seq_block(ni, no, DENSE_ROWS, n, x, dy, o, i, dw + o * ni);                 \
                    for (; i < end; i += DENSE_LANES)                                                       \
                        weights_seq_block(ni, no, 1, n, x, dy, o, i, dw + o * ni);                          \
                }                                                                                           \
            }                                                                                               \
        }                                                                                                   \
        for (size_t o = 0; o < no; o++) {                                                                   \
            float *row = dw + o * ni;                                                                       \
            size_t i = tree ? 0 : full;                                                                     \
            for (; i < full; i += DENSE_LANES) {                                                            \
                v16 level[DENSE_TREE];                                                                      \
                int size[DENSE_TREE], top = 0;                                                              \
                v16 xv, d;                                                                                  \
                for (int s = 0; s < n; s++) {                                                               \
                    LOAD16(xv, x + (size_t)s * ni + i);                                                     \
                    TREE_PUSH(level, size, top, dy[(size_t)s * no + o] * xv);                               \
                }                                                                                           \
                TREE_FOLD(level, top);                                                                      \
                LOAD16(d, row + i);                                                                         \
                d += level[0];                                                                              \
                STORE16(row + i, d);                                                                        \
            }                                                                                               \
            for (; i < ni; i++)                                                                             \
                row[i] = tree_or_sum(n, no, ni, o, i, x, dy, row[i], tree);                                 \
        }                                                                                                   \
    }


#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
DENSE_VARIANT(avx512, __attribute__((target("avx512f"))))
DENSE_VARIANT(avx2, __attribute__((target("avx2"))))
#endif
DENSE_VARIANT(base, )

/* The widest variant this CPU runs: 2 AVX-512, 1 AVX2, 0 the baseline. */
static int widest_isa(void)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (__builtin_cpu_supports("avx512f"))
        return 2;
    if (__builtin_cpu_supports("avx2"))
        return 1;
#endif
    return 0;
}

static int forced_isa = -1; /* dahl_dense_force_variant's choice; -1: the widest */

int dahl_dense_force_variant(int variant)
{
    if (variant > widest_isa())
        return -1;
    forced_isa = variant < 0 ? -1 : variant;
    return 0;
}

static int dense_isa(void)
{
    return forced_isa >= 0 ? forced_isa : widest_isa();
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define DENSE_DISPATCH(NAME, ...)                                                                             \
    switch (dense_isa()) {                                                                                  \
    case 2: NAME##_avx512(__VA_ARGS__); break;                                                              \
    case 1: NAME##_avx2(__VA_ARGS__); break;                                                                \
    default: NAME##_base(__VA_ARGS__); break;                                                               \
    }
#else
#define DENSE_DISPATCH(NAME, ...) NAME##_base(__VA_ARGS__)
#endif

void dahl_dense_forward_n(int n_in, int n_out, int n, const float *x, const float *w, const float *b, float *y)
{
    DENSE_DISPATCH(forward, (size_t)n_in, (size_t)n_out, n, x, w, b, y)
}

void dahl_dense_backward_input_n(int n_in, int n_out, int n, const float *dy, const float *w, float *dx)
{
    DENSE_DISPATCH(backward_input, (size_t)n_in, (size_t)n_out, n, dy, w, dx)
}

/* db: dw's arithmetic with x = 1 (dy * 1 is dy exactly), one element per output: tree_or_sum with N_in = 0
 * reads x[0] for every sample. */
static void bias_grads(int n, size_t no, const float *dy, float *db, bool tree)
{
    static const float one = 1.0f;
    for (size_t o = 0; o < no; o++)
        db[o] = tree_or_sum(n, no, 0, o, 0, &one, dy, db[o], tree);
}

void dahl_dense_backward_weights_n(int n_in, int n_out, int n, const float *x, const float *dy, float *dw, float *db,
                                   bool tree)
{
    DENSE_DISPATCH(backward_weights, (size_t)n_in, (size_t)n_out, n, x, dy, dw, tree)
    bias_grads(n, (size_t)n_out, dy, db, tree);
}

void dahl_dense_forward(int n_in, int n_out, const float *x, const float *w, const float *b, float *y)
{
    dahl_dense_forward_n(n_in, n_out, 1, x, w, b, y);
}

void dahl_dense_backward_input(int n_in, int n_out, const float *dy, const float *w, float *dx)
{
    dahl_dense_backward_input_n(n_in, n_out, 1, dy, w, dx);
}

void dahl_dense_backward_weights(int n_in, int n_out, const float *x, const float *dy, float *dw, float *db)
{
    dahl_dense_backward_weights_n(n_in, n_out, 1, x, dy, dw, db, false);
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
