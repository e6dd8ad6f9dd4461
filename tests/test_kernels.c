/* Tests of the CPU kernels of convolutions, pooling and ReLU (kernels/; the others: test_layer_kernels.c):
 * each forward against a naive loop written here, each backward against central finite differences of that
 * naive forward computed in double (so the differences are exact to ~1e-9 and the tolerance only has to absorb
 * the kernel's float rounding), plus the accumulate/overwrite contracts and the cost helpers on known shapes. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dahl_kernels.h"
#include "kernel_test_util.h"

/* ---- conv2d ---------------------------------------------------------------------------------------------- */

/* The textbook seven-loop convolution, in double. */
static void ref_conv2d(const struct dahl_conv2d_shape *s, const double *x, const double *w, const double *b,
                       double *y)
{
    const int oh_n = dahl_conv2d_out_h(s), ow_n = dahl_conv2d_out_w(s);
    for (int f = 0; f < s->f; f++) {
        for (int oh = 0; oh < oh_n; oh++) {
            for (int ow = 0; ow < ow_n; ow++) {
                double acc = b[f];
                for (int c = 0; c < s->c; c++) {
                    for (int ki = 0; ki < s->kh; ki++) {
                        for (int kj = 0; kj < s->kw; kj++) {
                            const int ih = oh * s->stride - s->pad + ki, iw = ow * s->stride - s->pad + kj;
                            if (ih < 0 || ih >= s->h || iw < 0 || iw >= s->w) {
                                continue;
                            }
                            acc += x[((size_t)c * s->h + ih) * s->w + iw] *
                                   w[(((size_t)f * s->c + c) * s->kh + ki) * s->kw + kj];
                        }
                    }
                }
                y[((size_t)f * oh_n + oh) * ow_n + ow] = acc;
            }
        }
    }
}

/* Stride 1 and 2, padding 0 and 1, non-square inputs and kernels, a kernel as wide as the padded input. */
static const struct dahl_conv2d_shape conv_shapes[] = {
    {.c = 1, .h = 5, .w = 5, .f = 1, .kh = 3, .kw = 3, .stride = 1, .pad = 0},
    {.c = 3, .h = 7, .w = 5, .f = 4, .kh = 3, .kw = 2, .stride = 1, .pad = 0},
    {.c = 3, .h = 7, .w = 5, .f = 4, .kh = 3, .kw = 2, .stride = 1, .pad = 1},
    {.c = 2, .h = 6, .w = 9, .f = 3, .kh = 2, .kw = 3, .stride = 2, .pad = 0},
    {.c = 2, .h = 9, .w = 6, .f = 5, .kh = 3, .kw = 3, .stride = 2, .pad = 1},
    {.c = 2, .h = 4, .w = 3, .f = 2, .kh = 4, .kw = 5, .stride = 1, .pad = 1},
};
#define N_CONV_SHAPES (sizeof conv_shapes / sizeof conv_shapes[0])

/* Tensors of one conv test case, float for the kernel and double for the reference. */
struct conv_case {
    struct dahl_conv2d_shape s;
    size_t nx, nw, ny;
    float *x, *w, *b, *y, *ws;
    double *xd, *wd, *bd, *yd;
};

static void conv_case_init(struct conv_case *t, const struct dahl_conv2d_shape *s)
{
    cr_assert(dahl_conv2d_shape_valid(s));
    t->s = *s;
    t->nx = (size_t)s->c * s->h * s->w;
    t->nw = (size_t)s->f * s->c * s->kh * s->kw;
    t->ny = (size_t)s->f * dahl_conv2d_out_h(s) * dahl_conv2d_out_w(s);
    t->x = random_floats(t->nx);
    t->w = random_floats(t->nw);
    t->b = random_floats((size_t)s->f);
    t->y = alloc_or_fail(t->ny * sizeof(float));
    t->ws = alloc_or_fail(dahl_conv2d_workspace_bytes(s));
    t->xd = to_double(t->x, t->nx);
    t->wd = to_double(t->w, t->nw);
    t->bd = to_double(t->b, (size_t)s->f);
    t->yd = alloc_or_fail(t->ny * sizeof(double));
}

static void conv_case_fini(struct conv_case *t)
{
    free(t->x), free(t->w), free(t->b), free(t->y), free(t->ws);
    free(t->xd), free(t->wd), free(t->bd), free(t->yd);
}

/* The scalar loss sum(r * conv(x, w, b)) whose gradient with respect to y is r. */
static double conv_loss(struct conv_case *t, const double *r)
{
    ref_conv2d(&t->s, t->xd, t->wd, t->bd, t->yd);
    return dot(r, t->yd, t->ny);
}

/* d loss / d v[i] by central differences, v being one of t's double tensors. */
static double conv_fd(struct conv_case *t, const double *r, double *v, size_t i)
{
    const double keep = v[i];
    v[i] = keep + FD_EPS;
    const double up = conv_loss(t, r);
    v[i] = keep - FD_EPS;
    const double down = conv_loss(t, r);
    v[i] = keep;
    return (up - down) / (2.0 * FD_EPS);
}

Test(kernels, conv2d_forward_matches_naive_loops)
{
    rng_seed(1);
    for (size_t k = 0; k < N_CONV_SHAPES; k++) {
        struct conv_case t;
        conv_case_init(&t, &conv_shapes[k]);
        memset(t.y, 0xff, t.ny * sizeof(float)); /* NaN garbage: the forward must overwrite every element */
        dahl_conv2d_forward(&t.s, t.x, t.w, t.b, t.y, t.ws);
        ref_conv2d(&t.s, t.xd, t.wd, t.bd, t.yd);
        expect_all_close("conv y", t.y, t.yd, t.ny);
        conv_case_fini(&t);
    }
}

/* Both forward implementations behind dahl_conv2d_forward, each against the naive loops, on the shapes above
 * and on wider ones that fill whole 24-column blocks of the direct AVX2 kernel and leave partial ones, with
 * filter counts that leave 1, 2 and 3 filters over a block of 4, and kernel widths 3, 5 (specialised) and 2, 4
 * (generic); the AVX-512 kernel's blocks of 6 filters and 16-64 columns (masked tails: 53, 70 and 130 columns)
 * must give the AVX2 kernel's bits. The direct one is skipped where it is not available (stride 2, or a CPU without AVX2/FMA). */
Test(kernels, conv2d_forward_direct_and_im2col_both_match_naive_loops)
{
    static const struct dahl_conv2d_shape wide[] = {
        {.c = 3, .h = 9, .w = 48, .f = 16, .kh = 3, .kw = 3, .stride = 1, .pad = 1},
        {.c = 2, .h = 7, .w = 53, .f = 7, .kh = 5, .kw = 5, .stride = 1, .pad = 2},
        {.c = 1, .h = 6, .w = 30, .f = 5, .kh = 2, .kw = 4, .stride = 1, .pad = 0},
        {.c = 4, .h = 5, .w = 26, .f = 6, .kh = 3, .kw = 3, .stride = 1, .pad = 3},
        {.c = 2, .h = 4, .w = 70, .f = 13, .kh = 3, .kw = 3, .stride = 1, .pad = 1},
        {.c = 1, .h = 3, .w = 130, .f = 8, .kh = 1, .kw = 1, .stride = 1, .pad = 0},
    };
    const size_t n_wide = sizeof wide / sizeof wide[0];
    rng_seed(11);
    int direct_runs = 0;
    for (size_t k = 0; k < N_CONV_SHAPES + n_wide; k++) {
        const struct dahl_conv2d_shape *s = k < N_CONV_SHAPES ? &conv_shapes[k] : &wide[k - N_CONV_SHAPES];
        struct conv_case t;
        conv_case_init(&t, s);
        cr_assert_geq(dahl_conv2d_workspace_bytes(s), dahl_conv2d_direct_workspace_bytes(s));
        ref_conv2d(&t.s, t.xd, t.wd, t.bd, t.yd);
        memset(t.y, 0xff, t.ny * sizeof(float));
        dahl_conv2d_forward_im2col(&t.s, t.x, t.w, t.b, t.y, t.ws);
        expect_all_close("im2col conv y", t.y, t.yd, t.ny);
        memset(t.y, 0xff, t.ny * sizeof(float));
        const bool ran = dahl_conv2d_forward_direct(&t.s, t.x, t.w, t.b, t.y, t.ws);
        cr_expect_eq(ran, dahl_conv2d_direct_available(s), "shape %zu", k);
        if (ran) {
            direct_runs++;
            expect_all_close("direct conv y", t.y, t.yd, t.ny);
            /* Every vector width this CPU runs gives the same bits: one FMA per (c, ki, kj) in one order. */
            float *y2 = alloc_or_fail(t.ny * sizeof(float));
            for (int bits = 256; bits <= 512; bits *= 2) {
                memset(y2, 0xff, t.ny * sizeof(float));
                if (dahl_conv2d_forward_direct_bits(&t.s, bits, t.x, t.w, t.b, y2, t.ws)) {
                    cr_expect(memcmp(y2, t.y, t.ny * sizeof(float)) == 0, "shape %zu: %d-bit kernel differs", k, bits);
                }
            }
            free(y2);
        }
#if defined(__x86_64__)
        cr_expect(ran || s->stride != 1 || !__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"),
                  "shape %zu: the direct kernel refused a stride-1 shape on an AVX2/FMA CPU", k);
#endif
        conv_case_fini(&t);
    }
    if (direct_runs == 0) {
        cr_log_warn("the direct conv2d kernel is not available on this CPU: only im2col was checked");
    }
}

Test(kernels, conv2d_backward_input_matches_finite_differences)
{
    rng_seed(2);
    for (size_t k = 0; k < N_CONV_SHAPES; k++) {
        struct conv_case t;
        conv_case_init(&t, &conv_shapes[k]);
        float *dy = random_floats(t.ny);
        double *r = to_double(dy, t.ny);
        float *dx = alloc_or_fail(t.nx * sizeof(float));
        memset(dx, 0xff, t.nx * sizeof(float)); /* overwritten, not accumulated */
        dahl_conv2d_backward_input(&t.s, dy, t.w, dx, t.ws);
        for (size_t i = 0; i < t.nx; i++) {
            expect_close("conv dx", i, dx[i], conv_fd(&t, r, t.xd, i));
        }
        free(dy), free(r), free(dx);
        conv_case_fini(&t);
    }
}

Test(kernels, conv2d_backward_weights_matches_finite_differences_and_accumulates)
{
    rng_seed(3);
    for (size_t k = 0; k < N_CONV_SHAPES; k++) {
        struct conv_case t;
        conv_case_init(&t, &conv_shapes[k]);
        float *dy = random_floats(t.ny);
        double *r = to_double(dy, t.ny);
        /* Start from known non-zero gradients and add two samples' worth (the same sample twice). */
        float *dw = alloc_or_fail(t.nw * sizeof(float));
        float *db = alloc_or_fail((size_t)t.s.f * sizeof(float));
        for (size_t i = 0; i < t.nw; i++) {
            dw[i] = 0.5f;
        }
        for (int i = 0; i < t.s.f; i++) {
            db[i] = -0.25f;
        }
        dahl_conv2d_backward_weights(&t.s, t.x, dy, dw, db, t.ws);
        dahl_conv2d_backward_weights(&t.s, t.x, dy, dw, db, t.ws);
        for (size_t i = 0; i < t.nw; i++) {
            expect_close("conv dw", i, dw[i], 0.5 + 2.0 * conv_fd(&t, r, t.wd, i));
        }
        for (int i = 0; i < t.s.f; i++) {
            expect_close("conv db", (size_t)i, db[i], -0.25 + 2.0 * conv_fd(&t, r, t.bd, (size_t)i));
        }
        free(dy), free(r), free(dw), free(db);
        conv_case_fini(&t);
    }
}

/* Shapes big enough that the im2col matrix is built in several bands of output rows (the last one partial):
 * the forward against the naive loops, and both backward passes through the adjoint identities of a map
 * linear in x and in w: with loss = <dy, conv(x, w, 0)>, <dx, x> = <dw, w> = loss, and db = sum(dy). */
Test(kernels, conv2d_multi_band_shapes_match_naive_loops_and_adjoints)
{
    static const struct dahl_conv2d_shape shapes[] = {
        {.c = 16, .h = 40, .w = 50, .f = 3, .kh = 3, .kw = 3, .stride = 1, .pad = 1},
        {.c = 8, .h = 61, .w = 70, .f = 2, .kh = 5, .kw = 4, .stride = 2, .pad = 2},
    };
    rng_seed(10);
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        struct conv_case t;
        conv_case_init(&t, &shapes[k]);
        const size_t full_col = t.nw / (size_t)t.s.f * (t.ny / (size_t)t.s.f) * sizeof(float);
        cr_assert_lt(dahl_conv2d_workspace_bytes(&t.s), full_col / 2, "shape %zu is not banded", k);
        dahl_conv2d_forward(&t.s, t.x, t.w, t.b, t.y, t.ws);
        ref_conv2d(&t.s, t.xd, t.wd, t.bd, t.yd);
        expect_all_close("banded conv y", t.y, t.yd, t.ny);

        float *dy = random_floats(t.ny), *dx = alloc_or_fail(t.nx * sizeof(float));
        float *dw = calloc(t.nw, sizeof(float)), *db = calloc((size_t)t.s.f, sizeof(float));
        cr_assert(dw != NULL && db != NULL);
        double *r = to_double(dy, t.ny);
        for (int f = 0; f < t.s.f; f++) {
            t.bd[f] = 0.0;
        }
        const double loss = conv_loss(&t, r);
        dahl_conv2d_backward_input(&t.s, dy, t.w, dx, t.ws);
        dahl_conv2d_backward_weights(&t.s, t.x, dy, dw, db, t.ws);
        double dx_x = 0.0, dw_w = 0.0;
        for (size_t i = 0; i < t.nx; i++) {
            dx_x += (double)dx[i] * t.xd[i];
        }
        for (size_t i = 0; i < t.nw; i++) {
            dw_w += (double)dw[i] * t.wd[i];
        }
        /* Sums of ~1e5 float products of O(1) terms: a relative 1e-4 of the loss's own scale. */
        const double scale = sqrt((double)t.ny * (double)(t.nw / (size_t)t.s.f));
        cr_expect_leq(fabs(dx_x - loss), 1e-4 * scale, "shape %zu: <dx, x> = %.9g, loss %.9g", k, dx_x, loss);
        cr_expect_leq(fabs(dw_w - loss), 1e-4 * scale, "shape %zu: <dw, w> = %.9g, loss %.9g", k, dw_w, loss);
        const size_t per_f = t.ny / (size_t)t.s.f;
        for (int f = 0; f < t.s.f; f++) {
            double sum = 0.0;
            for (size_t i = 0; i < per_f; i++) {
                sum += r[(size_t)f * per_f + i];
            }
            expect_close("banded conv db", (size_t)f, db[f], sum);
        }
        free(dy), free(dx), free(dw), free(db), free(r);
        conv_case_fini(&t);
    }
}

Test(kernels, conv2d_workspace_stays_small_on_large_images)
{
    const struct dahl_conv2d_shape s = {.c = 3, .h = 512, .w = 512, .f = 16, .kh = 3, .kw = 3, .stride = 1,
                                        .pad = 1};
    cr_expect_leq(dahl_conv2d_workspace_bytes(&s), (size_t)256 * 1024);
    cr_expect_geq(dahl_conv2d_workspace_bytes(&s), (size_t)27 * 512 * sizeof(float)); /* one output row */
}

Test(kernels, conv2d_shape_helpers)
{
    const struct dahl_conv2d_shape s = {.c = 3, .h = 28, .w = 20, .f = 6, .kh = 5, .kw = 3, .stride = 2,
                                        .pad = 1};
    cr_expect_eq(dahl_conv2d_out_h(&s), 13); /* (28 + 2 - 5) / 2 + 1 */
    cr_expect_eq(dahl_conv2d_out_w(&s), 10); /* (20 + 2 - 3) / 2 + 1 */
    cr_expect_eq(dahl_conv2d_workspace_bytes(&s), (size_t)3 * 5 * 3 * 13 * 10 * sizeof(float));
    cr_expect(dahl_conv2d_shape_valid(&s));
    const struct dahl_conv2d_shape too_big = {.c = 1, .h = 2, .w = 2, .f = 1, .kh = 5, .kw = 1, .stride = 1,
                                              .pad = 1};
    cr_expect_not(dahl_conv2d_shape_valid(&too_big));
    const struct dahl_conv2d_shape no_stride = {.c = 1, .h = 4, .w = 4, .f = 1, .kh = 1, .kw = 1, .stride = 0,
                                                .pad = 0};
    cr_expect_not(dahl_conv2d_shape_valid(&no_stride));
}

Test(kernels, conv2d_cost_helpers_on_a_known_shape)
{
    /* LeNet's first layer: 3x28x28, 6 filters 5x5, pad 2 -> 6x28x28. */
    const struct dahl_conv2d_shape s = {.c = 3, .h = 28, .w = 28, .f = 6, .kh = 5, .kw = 5, .stride = 1,
                                        .pad = 2};
    const double gemm = 2.0 * 3 * 5 * 5 * 28 * 28 * 6;
    cr_expect_eq(dahl_conv2d_forward_flops(&s), gemm + 6 * 28 * 28);
    cr_expect_eq(dahl_conv2d_backward_input_flops(&s), gemm + 3 * 5 * 5 * 28 * 28);
    cr_expect_eq(dahl_conv2d_backward_weights_flops(&s), gemm + 6 * 28 * 28);
    cr_expect_eq(dahl_conv2d_forward_bytes(&s), 4 * (3 * 28 * 28 + 6 * 3 * 5 * 5 + 6 + 6 * 28 * 28));
    cr_expect_eq(dahl_conv2d_backward_input_bytes(&s), 4 * (6 * 28 * 28 + 6 * 3 * 5 * 5 + 3 * 28 * 28));
    cr_expect_eq(dahl_conv2d_backward_weights_bytes(&s),
                 4 * (3 * 28 * 28 + 6 * 28 * 28 + 2 * 6 * 3 * 5 * 5 + 2 * 6));
}

/* ---- max-pool ------------------------------------------------------------------------------------------ */

static void ref_maxpool(const struct dahl_maxpool_shape *s, const double *x, double *y)
{
    const int oh_n = dahl_maxpool_out_h(s), ow_n = dahl_maxpool_out_w(s);
    for (int c = 0; c < s->c; c++) {
        for (int oh = 0; oh < oh_n; oh++) {
            for (int ow = 0; ow < ow_n; ow++) {
                double m = -INFINITY; /* the padding's value */
                for (int i = 0; i < s->k; i++) {
                    for (int j = 0; j < s->k; j++) {
                        const int ih = oh * s->stride - s->pad + i, iw = ow * s->stride - s->pad + j;
                        if (ih < 0 || ih >= s->h || iw < 0 || iw >= s->w)
                            continue;
                        const double v = x[((size_t)c * s->h + ih) * s->w + iw];
                        m = v > m ? v : m;
                    }
                }
                y[((size_t)c * oh_n + oh) * ow_n + ow] = m;
            }
        }
    }
}

/* 2x2 stride 2 (odd sizes: the last row/column is in no window) and overlapping 3x3 stride 2. */
static const struct dahl_maxpool_shape pool_shapes[] = {
    {.c = 2, .h = 4, .w = 6, .k = 2, .stride = 2},
    {.c = 3, .h = 5, .w = 7, .k = 2, .stride = 2},
    {.c = 2, .h = 7, .w = 5, .k = 3, .stride = 2},
};
#define N_POOL_SHAPES (sizeof pool_shapes / sizeof pool_shapes[0])

/* Max-pool's: those, then padded windows: ResNet's stem (3x3 stride 2 pad 1, odd and even sizes) and 2x2
 * stride 1 pad 1 (corner windows of one pixel). */
static const struct dahl_maxpool_shape maxpool_shapes[] = {
    {.c = 2, .h = 4, .w = 6, .k = 2, .stride = 2},
    {.c = 3, .h = 5, .w = 7, .k = 2, .stride = 2},
    {.c = 2, .h = 7, .w = 5, .k = 3, .stride = 2},
    {.c = 2, .h = 7, .w = 8, .k = 3, .stride = 2, .pad = 1},
    {.c = 1, .h = 4, .w = 5, .k = 2, .stride = 1, .pad = 1},
};
#define N_MAXPOOL_SHAPES (sizeof maxpool_shapes / sizeof maxpool_shapes[0])

/* Distinct values at least 0.01 apart, shuffled, so no window has a tie and FD_EPS never crosses a max. */
static float *distinct_floats(size_t n)
{
    float *v = alloc_or_fail(n * sizeof(float));
    for (size_t i = 0; i < n; i++) {
        v[i] = 0.01f * (float)i - 0.5f;
    }
    for (size_t i = n - 1; i > 0; i--) {
        const size_t j = (size_t)((rng_uniform() + 1.0f) * 0.5f * (float)(i + 1)) % (i + 1);
        const float tmp = v[i];
        v[i] = v[j];
        v[j] = tmp;
    }
    return v;
}

Test(kernels, maxpool_forward_matches_naive_loops)
{
    rng_seed(4);
    for (size_t k = 0; k < N_MAXPOOL_SHAPES; k++) {
        const struct dahl_maxpool_shape *s = &maxpool_shapes[k];
        cr_assert(dahl_maxpool_shape_valid(s));
        struct dahl_maxpool_shape wide = *s;
        wide.pad = s->k / 2 + 1;
        cr_expect_not(dahl_maxpool_shape_valid(&wide), "pad %d > %d / 2: a window of padding only", wide.pad, s->k);
        const size_t nx = (size_t)s->c * s->h * s->w;
        const size_t ny = (size_t)s->c * dahl_maxpool_out_h(s) * dahl_maxpool_out_w(s);
        float *x = random_floats(nx), *y = alloc_or_fail(ny * sizeof(float));
        double *xd = to_double(x, nx), *yd = alloc_or_fail(ny * sizeof(double));
        dahl_maxpool_forward(s, x, y);
        ref_maxpool(s, xd, yd);
        for (size_t i = 0; i < ny; i++) {
            cr_expect_eq(y[i], (float)yd[i], "pool y[%zu]: got %g, want %g", i, y[i], yd[i]);
        }
        free(x), free(y), free(xd), free(yd);
    }
}

Test(kernels, maxpool_backward_matches_finite_differences)
{
    rng_seed(5);
    for (size_t k = 0; k < N_MAXPOOL_SHAPES; k++) {
        const struct dahl_maxpool_shape *s = &maxpool_shapes[k];
        const size_t nx = (size_t)s->c * s->h * s->w;
        const size_t ny = (size_t)s->c * dahl_maxpool_out_h(s) * dahl_maxpool_out_w(s);
        float *x = distinct_floats(nx), *dy = random_floats(ny), *dx = alloc_or_fail(nx * sizeof(float));
        double *xd = to_double(x, nx), *r = to_double(dy, ny), *yd = alloc_or_fail(ny * sizeof(double));
        memset(dx, 0xff, nx * sizeof(float));
        dahl_maxpool_backward(s, x, dy, dx);
        for (size_t i = 0; i < nx; i++) {
            const double keep = xd[i];
            xd[i] = keep + FD_EPS;
            ref_maxpool(s, xd, yd);
            const double up = dot(r, yd, ny);
            xd[i] = keep - FD_EPS;
            ref_maxpool(s, xd, yd);
            const double down = dot(r, yd, ny);
            xd[i] = keep;
            expect_close("pool dx", i, dx[i], (up - down) / (2.0 * FD_EPS));
        }
        free(x), free(dy), free(dx), free(xd), free(r), free(yd);
    }
}

/* ---- average pool ------------------------------------------------------------------------------------- */

static void ref_avgpool(const struct dahl_maxpool_shape *s, const double *x, double *y)
{
    const int oh_n = dahl_maxpool_out_h(s), ow_n = dahl_maxpool_out_w(s);
    for (int c = 0; c < s->c; c++) {
        for (int oh = 0; oh < oh_n; oh++) {
            for (int ow = 0; ow < ow_n; ow++) {
                double sum = 0;
                for (int i = 0; i < s->k; i++)
                    for (int j = 0; j < s->k; j++)
                        sum += x[((size_t)c * s->h + oh * s->stride + i) * s->w + ow * s->stride + j];
                y[((size_t)c * oh_n + oh) * ow_n + ow] = sum / (s->k * s->k);
            }
        }
    }
}

/* The max-pool shapes, plus a global one (the window is the whole 6x6 image). */
Test(kernels, avgpool_matches_naive_loops_and_finite_differences)
{
    rng_seed(6);
    struct dahl_maxpool_shape shapes[N_POOL_SHAPES + 1];
    memcpy(shapes, pool_shapes, sizeof(pool_shapes));
    shapes[N_POOL_SHAPES] = (struct dahl_maxpool_shape){.c = 3, .h = 6, .w = 6, .k = 6, .stride = 6};
    for (size_t k = 0; k <= N_POOL_SHAPES; k++) {
        const struct dahl_maxpool_shape *s = &shapes[k];
        const size_t nx = (size_t)s->c * s->h * s->w;
        const size_t ny = (size_t)s->c * dahl_maxpool_out_h(s) * dahl_maxpool_out_w(s);
        float *x = random_floats(nx), *y = alloc_or_fail(ny * sizeof(float)), *dy = random_floats(ny);
        float *dx = alloc_or_fail(nx * sizeof(float));
        double *xd = to_double(x, nx), *r = to_double(dy, ny), *yd = alloc_or_fail(ny * sizeof(double));
        dahl_avgpool_forward(s, x, y);
        ref_avgpool(s, xd, yd);
        for (size_t i = 0; i < ny; i++)
            expect_close("avgpool y", i, y[i], yd[i]);
        memset(dx, 0xff, nx * sizeof(float));
        dahl_avgpool_backward(s, dy, dx);
        for (size_t i = 0; i < nx; i++) {
            const double keep = xd[i];
            xd[i] = keep + FD_EPS;
            ref_avgpool(s, xd, yd);
            const double up = dot(r, yd, ny);
            xd[i] = keep - FD_EPS;
            ref_avgpool(s, xd, yd);
            const double down = dot(r, yd, ny);
            xd[i] = keep;
            expect_close("avgpool dx", i, dx[i], (up - down) / (2.0 * FD_EPS));
        }
        free(x), free(y), free(dy), free(dx), free(xd), free(r), free(yd);
    }
    const struct dahl_maxpool_shape g = {.c = 6, .h = 8, .w = 8, .k = 8, .stride = 8};
    cr_expect_eq(dahl_avgpool_forward_flops(&g), 6.0 * 64);
    cr_expect_eq(dahl_avgpool_backward_flops(&g), 6.0 * 65);
    cr_expect_eq(dahl_avgpool_forward_bytes(&g), 4 * (6 * 64 + 6));
    cr_expect_eq(dahl_avgpool_backward_bytes(&g), 4 * (6 + 6 * 64));
}

Test(kernels, maxpool_ties_go_to_the_first_maximum)
{
    const struct dahl_maxpool_shape s = {.c = 1, .h = 2, .w = 2, .k = 2, .stride = 2};
    const float x[4] = {1.0f, 3.0f, 3.0f, 3.0f};
    const float dy[1] = {7.0f};
    float y[1], dx[4];
    dahl_maxpool_forward(&s, x, y);
    dahl_maxpool_backward(&s, x, dy, dx);
    cr_expect_eq(y[0], 3.0f);
    cr_expect_eq(dx[0], 0.0f);
    cr_expect_eq(dx[1], 7.0f);
    cr_expect_eq(dx[2], 0.0f);
    cr_expect_eq(dx[3], 0.0f);
}

Test(kernels, maxpool_cost_helpers_on_a_known_shape)
{
    const struct dahl_maxpool_shape s = {.c = 6, .h = 28, .w = 28, .k = 2, .stride = 2};
    cr_expect_eq(dahl_maxpool_out_h(&s), 14);
    cr_expect_eq(dahl_maxpool_forward_flops(&s), 6.0 * 14 * 14 * 3);
    cr_expect_eq(dahl_maxpool_backward_flops(&s), 6.0 * 14 * 14 * 4);
    cr_expect_eq(dahl_maxpool_forward_bytes(&s), 4 * (6 * 28 * 28 + 6 * 14 * 14));
    cr_expect_eq(dahl_maxpool_backward_bytes(&s), 4 * (2 * 6 * 28 * 28 + 6 * 14 * 14));
}

/* ---- ReLU ---------------------------------------------------------------------------------------------- */

Test(kernels, relu_forward_and_backward)
{
    enum { N = 64 };
    rng_seed(6);
    float x[N], y[N], dy[N], dx[N];
    for (size_t i = 0; i < N; i++) {
        const float v = rng_uniform();
        x[i] = v + (v >= 0.0f ? 0.1f : -0.1f); /* away from the kink, so FD_EPS never crosses it */
        dy[i] = rng_uniform();
    }
    dahl_relu_forward(N, x, y);
    dahl_relu_backward(N, y, dy, dx);
    for (size_t i = 0; i < N; i++) {
        cr_expect_eq(y[i], x[i] > 0.0f ? x[i] : 0.0f, "relu y[%zu]", i);
        /* d/dx of dy * relu(x), by central differences. */
        const double fd = dy[i] * (fmax(x[i] + FD_EPS, 0.0) - fmax(x[i] - FD_EPS, 0.0)) / (2.0 * FD_EPS);
        expect_close("relu dx", i, dx[i], fd);
    }
    /* In place, as a layer that does not keep its pre-activation would run it. */
    float z[N];
    memcpy(z, x, sizeof z);
    dahl_relu_forward(N, z, z);
    cr_expect_arr_eq(z, y, sizeof z);
    dahl_relu_backward(N, z, dy, dy);
    cr_expect_arr_eq(dy, dx, sizeof dx);
    cr_expect_eq(dahl_relu_forward_flops(10), 10.0);
    cr_expect_eq(dahl_relu_backward_bytes(10), 120);
}

/* The vector loop and its scalar tail give, bit for bit, what `x > 0 ? x : 0` gives, on the values where
 * a max could differ from it (signed zeros, NaN, infinities, subnormals) and on a length that is not a
 * multiple of the vector width. */
Test(kernels, relu_matches_the_definition_bit_for_bit)
{
    enum { N = 67 };
    const float special[] = {0.0f, -0.0f, NAN, -NAN, INFINITY, -INFINITY, 1e-42f, -1e-42f, 1.0f, -1.0f};
    enum { NSPECIAL = sizeof(special) / sizeof(special[0]) };
    rng_seed(7);
    float x[N], y[N], dy[N], dx[N];
    for (size_t i = 0; i < N; i++) {
        x[i] = i % 3 == 0 ? special[(i / 3) % NSPECIAL] : rng_uniform();
        dy[i] = i % 5 == 0 ? special[(i / 5) % NSPECIAL] : rng_uniform();
    }
    dahl_relu_forward(N, x, y);
    dahl_relu_backward(N, x, dy, dx); /* x, not y, as the mask: the specials reach the comparison */
    for (size_t i = 0; i < N; i++) {
        const float want_y = x[i] > 0.0f ? x[i] : 0.0f;
        const float want_dx = x[i] > 0.0f ? dy[i] : 0.0f;
        cr_expect_eq(memcmp(&y[i], &want_y, sizeof(float)), 0, "relu y[%zu] = %a, want %a", i, y[i], want_y);
        cr_expect_eq(memcmp(&dx[i], &want_dx, sizeof(float)), 0, "relu dx[%zu] = %a, want %a", i, dx[i], want_dx);
    }
}

/* ---- dense --------------------------------------------------------------------------------------------- */
