/* dahl codelets on native StarPU (2 CPU workers): each task's result equals a direct call of its kernel on
 * the same data; gradients summed over samples by STARPU_REDUX and by the manual path (per-sample buffers +
 * accumulate) equal the direct sum; invalid handles are refused; the perf-model kind switch parses its
 * names and freezes once a task was submitted. Criterion runs every test in its own process. */
#include <criterion/criterion.h>

#include "dahl_codelets_starpu.h"
#include "dahl_engine.h"
#include "dahl_kernels.h"
#include "dahl_tensor.h"
#include "dahl_tensor_starpu.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char starpu_home[] = "/tmp/dahlsim-codelets-XXXXXX";

static void start(void)
{
    cr_assert_not_null(mkdtemp(starpu_home));
    setenv("STARPU_HOME", starpu_home, 1);
    setenv("STARPU_SILENT", "1", 1);
    dahl_kernels_init();
    struct dahl_engine_conf conf = dahl_engine_conf_default();
    conf.ncpu = 2;
    conf.ngpu = 0;
    cr_assert_eq(dahl_engine_start(&conf), 0);
}

TestSuite(codelets, .init = start, .fini = dahl_engine_stop);

/* Restarts StarPU recording every task into the history files it writes at shutdown, under a fixed host
 * name so the test knows the files' names. */
static void restart_calibrating(void)
{
    dahl_engine_stop();
    setenv("STARPU_CALIBRATE", "1", 1);
    setenv("STARPU_HOSTNAME", "dahltest", 1);
    struct dahl_engine_conf conf = dahl_engine_conf_default();
    conf.ncpu = 2;
    conf.ngpu = 0;
    cr_assert_eq(dahl_engine_start(&conf), 0);
}

/* Number of history entries (lines starting with an 8-digit hex footprint) in the model file of symbol. */
static int history_entries(const char *symbol)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/.starpu/sampling/codelets/45/%s.dahltest", starpu_home, symbol);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "no model file %s", path);
    char line[1024];
    int entries = 0;
    while (fgets(line, sizeof(line), f) != NULL) {
        size_t hex = strspn(line, "0123456789abcdef");
        if (hex == 8 && (line[8] == '\t' || line[8] == ' '))
            entries++;
    }
    fclose(f);
    return entries;
}

/* Deterministic values in [-1, 1) (a 32-bit LCG), different for every seed. */
static void fill(float *v, size_t n, unsigned seed)
{
    unsigned s = seed * 2654435761u + 12345u;
    for (size_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        v[i] = (float)((s >> 8) & 0xffff) / 32768.0f - 1.0f;
    }
}

static float *alloc_floats(size_t n)
{
    float *p = calloc(n, sizeof(float));
    cr_assert_not_null(p);
    return p;
}

/* A 1-D tensor of n floats holding v (zeros when v is NULL). */
static struct dahl_tensor *tensor_of(size_t n, const float *v)
{
    struct dahl_tensor *t = dahl_tensor_create(1, (int[]){(int)n});
    cr_assert_not_null(t);
    if (v != NULL)
        cr_assert_eq(dahl_tensor_write(t, v, n), 0);
    return t;
}

/* A 1-D tensor of n random floats, also copied into *out (caller frees). */
static struct dahl_tensor *tensor_random(size_t n, unsigned seed, float **out)
{
    float *v = alloc_floats(n);
    fill(v, n, seed);
    *out = v;
    return tensor_of(n, v);
}

/* |got - want| <= tol * max(1, |want|) element by element; reads the tensor back (waits for its tasks). */
static void assert_tensor_close(struct dahl_tensor *t, const float *want, size_t n, float tol, const char *what)
{
    float *got = alloc_floats(n);
    cr_assert_eq(dahl_tensor_read(t, got, n), 0, "%s: read back", what);
    for (size_t i = 0; i < n; i++) {
        const float scale = fabsf(want[i]) > 1.0f ? fabsf(want[i]) : 1.0f;
        cr_assert(fabsf(got[i] - want[i]) <= tol * scale, "%s[%zu]: got %.9g, want %.9g", what, i, (double)got[i],
                  (double)want[i]);
    }
    free(got);
}

#define H(t) dahl_tensor_handle(t)

static const struct dahl_conv2d_shape conv_shape = {.c = 2, .h = 6, .w = 5, .f = 3, .kh = 3, .kw = 3, .stride = 1,
                                                    .pad = 1};

static size_t conv_x_n(void)
{
    return (size_t)(conv_shape.c * conv_shape.h * conv_shape.w);
}

static size_t conv_w_n(void)
{
    return (size_t)(conv_shape.f * conv_shape.c * conv_shape.kh * conv_shape.kw);
}

static size_t conv_y_n(void)
{
    return (size_t)(conv_shape.f * dahl_conv2d_out_h(&conv_shape) * dahl_conv2d_out_w(&conv_shape));
}

Test(codelets, conv2d_forward_and_backward_input_match_the_kernels)
{
    const struct dahl_conv2d_shape *s = &conv_shape;
    float *x, *w, *b, *dy;
    struct dahl_tensor *tx = tensor_random(conv_x_n(), 1, &x), *tw = tensor_random(conv_w_n(), 2, &w);
    struct dahl_tensor *tb = tensor_random((size_t)s->f, 3, &b), *tdy = tensor_random(conv_y_n(), 4, &dy);
    struct dahl_tensor *ty = tensor_of(conv_y_n(), NULL), *tdx = tensor_of(conv_x_n(), NULL);
    starpu_data_handle_t ws = dahl_workspace_create(dahl_conv2d_workspace_bytes(s));
    cr_assert_not_null(ws);

    cr_assert_eq(dahl_insert_conv2d_forward(s, H(tx), H(tw), H(tb), H(ty), ws), 0);
    cr_assert_eq(dahl_insert_conv2d_backward_input(s, H(tdy), H(tw), H(tdx), ws), 0);

    float *y = alloc_floats(conv_y_n()), *dx = alloc_floats(conv_x_n());
    float *scratch = alloc_floats(dahl_conv2d_workspace_bytes(s) / sizeof(float) + 1);
    dahl_conv2d_forward(s, x, w, b, y, scratch);
    dahl_conv2d_backward_input(s, dy, w, dx, scratch);
    assert_tensor_close(ty, y, conv_y_n(), 1e-5f, "conv2d y");
    assert_tensor_close(tdx, dx, conv_x_n(), 1e-5f, "conv2d dx");

    dahl_workspace_destroy(ws);
    dahl_tensor_destroy(tx), dahl_tensor_destroy(tw), dahl_tensor_destroy(tb), dahl_tensor_destroy(tdy);
    dahl_tensor_destroy(ty), dahl_tensor_destroy(tdx);
    free(x), free(w), free(b), free(dy), free(y), free(dx), free(scratch);
}

Test(codelets, conv2d_backward_weights_accumulates_into_rw_gradients)
{
    const struct dahl_conv2d_shape *s = &conv_shape;
    float *x, *dy, *dw, *db;
    struct dahl_tensor *tx = tensor_random(conv_x_n(), 5, &x), *tdy = tensor_random(conv_y_n(), 6, &dy);
    struct dahl_tensor *tdw = tensor_random(conv_w_n(), 7, &dw), *tdb = tensor_random((size_t)s->f, 8, &db);
    starpu_data_handle_t ws = dahl_workspace_create(dahl_conv2d_workspace_bytes(s));

    cr_assert_eq(dahl_insert_conv2d_backward_weights(s, H(tx), H(tdy), H(tdw), H(tdb), STARPU_RW, ws), 0);

    float *scratch = alloc_floats(dahl_conv2d_workspace_bytes(s) / sizeof(float) + 1);
    dahl_conv2d_backward_weights(s, x, dy, dw, db, scratch); /* onto the same starting values */
    assert_tensor_close(tdw, dw, conv_w_n(), 1e-5f, "conv2d dw");
    assert_tensor_close(tdb, db, (size_t)s->f, 1e-5f, "conv2d db");

    dahl_workspace_destroy(ws);
    dahl_tensor_destroy(tx), dahl_tensor_destroy(tdy), dahl_tensor_destroy(tdw), dahl_tensor_destroy(tdb);
    free(x), free(dy), free(dw), free(db), free(scratch);
}

enum { NSAMPLES = 8 };

/* x [NSAMPLES][C][H][W] and dy [NSAMPLES][F][OH][OW], split per sample, with their values. */
struct conv_batch {
    struct dahl_tensor *x, *dy;
    float *xv, *dyv;
};

static void conv_batch_init(struct conv_batch *bt)
{
    const struct dahl_conv2d_shape *s = &conv_shape;
    const int oh = dahl_conv2d_out_h(s), ow = dahl_conv2d_out_w(s);
    bt->x = dahl_tensor_create(4, (int[]){NSAMPLES, s->c, s->h, s->w});
    bt->dy = dahl_tensor_create(4, (int[]){NSAMPLES, s->f, oh, ow});
    cr_assert(bt->x != NULL && bt->dy != NULL);
    bt->xv = alloc_floats(NSAMPLES * conv_x_n());
    bt->dyv = alloc_floats(NSAMPLES * conv_y_n());
    fill(bt->xv, NSAMPLES * conv_x_n(), 11);
    fill(bt->dyv, NSAMPLES * conv_y_n(), 12);
    cr_assert_eq(dahl_tensor_write(bt->x, bt->xv, NSAMPLES * conv_x_n()), 0);
    cr_assert_eq(dahl_tensor_write(bt->dy, bt->dyv, NSAMPLES * conv_y_n()), 0);
    cr_assert_eq(dahl_tensor_split_batch(bt->x), 0);
    cr_assert_eq(dahl_tensor_split_batch(bt->dy), 0);
}

static void conv_batch_fini(struct conv_batch *bt)
{
    dahl_tensor_destroy(bt->x), dahl_tensor_destroy(bt->dy);
    free(bt->xv), free(bt->dyv);
}

/* The direct sum over the batch, onto dw/db's starting values. */
static void conv_batch_reference(const struct conv_batch *bt, float *dw, float *db)
{
    const struct dahl_conv2d_shape *s = &conv_shape;
    float *scratch = alloc_floats(dahl_conv2d_workspace_bytes(s) / sizeof(float) + 1);
    for (size_t i = 0; i < NSAMPLES; i++)
        dahl_conv2d_backward_weights(s, bt->xv + i * conv_x_n(), bt->dyv + i * conv_y_n(), dw, db, scratch);
    free(scratch);
}

Test(codelets, conv2d_backward_weights_redux_sums_the_samples)
{
    const struct dahl_conv2d_shape *s = &conv_shape;
    struct conv_batch bt;
    conv_batch_init(&bt);
    float *dw, *db;
    struct dahl_tensor *tdw = tensor_random(conv_w_n(), 13, &dw), *tdb = tensor_random((size_t)s->f, 14, &db);
    dahl_gradient_enable_redux(H(tdw));
    dahl_gradient_enable_redux(H(tdb));
    starpu_data_handle_t ws = dahl_workspace_create(dahl_conv2d_workspace_bytes(s));

    for (int i = 0; i < NSAMPLES; i++)
        cr_assert_eq(dahl_insert_conv2d_backward_weights(s, dahl_tensor_sample(bt.x, i), dahl_tensor_sample(bt.dy, i),
                                                         H(tdw), H(tdb), STARPU_REDUX, ws),
                     0);

    conv_batch_reference(&bt, dw, db);
    assert_tensor_close(tdw, dw, conv_w_n(), 1e-4f, "redux dw");
    assert_tensor_close(tdb, db, (size_t)s->f, 1e-4f, "redux db");

    dahl_workspace_destroy(ws);
    dahl_tensor_destroy(tdw), dahl_tensor_destroy(tdb);
    conv_batch_fini(&bt);
    free(dw), free(db);
}

Test(codelets, conv2d_backward_weights_manual_reduction_sums_the_samples)
{
    const struct dahl_conv2d_shape *s = &conv_shape;
    struct conv_batch bt;
    conv_batch_init(&bt);
    float *dw, *db;
    struct dahl_tensor *tdw = tensor_random(conv_w_n(), 15, &dw), *tdb = tensor_random((size_t)s->f, 16, &db);
    /* Private per-sample gradients, filled with garbage first: dahl_zero must clear them. */
    struct dahl_tensor *pdw = dahl_tensor_create(2, (int[]){NSAMPLES, (int)conv_w_n()});
    struct dahl_tensor *pdb = dahl_tensor_create(2, (int[]){NSAMPLES, s->f});
    float *garbage = alloc_floats(NSAMPLES * conv_w_n());
    fill(garbage, NSAMPLES * conv_w_n(), 17);
    cr_assert_eq(dahl_tensor_write(pdw, garbage, NSAMPLES * conv_w_n()), 0);
    cr_assert_eq(dahl_tensor_write(pdb, garbage, NSAMPLES * (size_t)s->f), 0);
    cr_assert_eq(dahl_tensor_split_batch(pdw), 0);
    cr_assert_eq(dahl_tensor_split_batch(pdb), 0);
    starpu_data_handle_t ws = dahl_workspace_create(dahl_conv2d_workspace_bytes(s));

    for (int i = 0; i < NSAMPLES; i++) {
        starpu_data_handle_t dwi = dahl_tensor_sample(pdw, i), dbi = dahl_tensor_sample(pdb, i);
        cr_assert_eq(dahl_insert_zero(dwi), 0);
        cr_assert_eq(dahl_insert_zero(dbi), 0);
        cr_assert_eq(dahl_insert_conv2d_backward_weights(s, dahl_tensor_sample(bt.x, i), dahl_tensor_sample(bt.dy, i),
                                                         dwi, dbi, STARPU_RW, ws),
                     0);
        cr_assert_eq(dahl_insert_accumulate(H(tdw), dwi), 0);
        cr_assert_eq(dahl_insert_accumulate(H(tdb), dbi), 0);
    }

    conv_batch_reference(&bt, dw, db);
    assert_tensor_close(tdw, dw, conv_w_n(), 1e-4f, "manual dw");
    assert_tensor_close(tdb, db, (size_t)s->f, 1e-4f, "manual db");

    dahl_workspace_destroy(ws);
    dahl_tensor_destroy(tdw), dahl_tensor_destroy(tdb), dahl_tensor_destroy(pdw), dahl_tensor_destroy(pdb);
    conv_batch_fini(&bt);
    free(dw), free(db), free(garbage);
}

Test(codelets, maxpool_forward_and_backward_match_the_kernels)
{
    const struct dahl_maxpool_shape s = {.c = 3, .h = 7, .w = 6, .k = 2, .stride = 2};
    const size_t xn = (size_t)(s.c * s.h * s.w);
    const size_t yn = (size_t)(s.c * dahl_maxpool_out_h(&s) * dahl_maxpool_out_w(&s));
    float *x, *dy;
    struct dahl_tensor *tx = tensor_random(xn, 21, &x), *tdy = tensor_random(yn, 22, &dy);
    struct dahl_tensor *ty = tensor_of(yn, NULL), *tdx = tensor_of(xn, NULL);

    cr_assert_eq(dahl_insert_maxpool_forward(&s, H(tx), H(ty)), 0);
    cr_assert_eq(dahl_insert_maxpool_backward(&s, H(tx), H(tdy), H(tdx)), 0);

    float *y = alloc_floats(yn), *dx = alloc_floats(xn);
    dahl_maxpool_forward(&s, x, y);
    dahl_maxpool_backward(&s, x, dy, dx);
    assert_tensor_close(ty, y, yn, 0.0f, "maxpool y");
    assert_tensor_close(tdx, dx, xn, 0.0f, "maxpool dx");

    dahl_tensor_destroy(tx), dahl_tensor_destroy(tdy), dahl_tensor_destroy(ty), dahl_tensor_destroy(tdx);
    free(x), free(dy), free(y), free(dx);
}

Test(codelets, relu_forward_and_backward_match_the_kernels)
{
    const size_t n = 37;
    float *x, *dy;
    struct dahl_tensor *tx = tensor_random(n, 31, &x), *tdy = tensor_random(n, 32, &dy);
    struct dahl_tensor *ty = tensor_of(n, NULL), *tdx = tensor_of(n, NULL);

    cr_assert_eq(dahl_insert_relu_forward(H(tx), H(ty)), 0);
    cr_assert_eq(dahl_insert_relu_backward(H(ty), H(tdy), H(tdx)), 0);

    float *y = alloc_floats(n), *dx = alloc_floats(n);
    dahl_relu_forward(n, x, y);
    dahl_relu_backward(n, y, dy, dx);
    assert_tensor_close(ty, y, n, 0.0f, "relu y");
    assert_tensor_close(tdx, dx, n, 0.0f, "relu dx");

    dahl_tensor_destroy(tx), dahl_tensor_destroy(tdy), dahl_tensor_destroy(ty), dahl_tensor_destroy(tdx);
    free(x), free(dy), free(y), free(dx);
}

Test(codelets, dense_matches_the_kernels_in_every_direction)
{
    const int n_in = 13, n_out = 5;
    const size_t wn = (size_t)(n_in * n_out);
    float *x, *w, *b, *dy, *dw, *db;
    struct dahl_tensor *tx = tensor_random((size_t)n_in, 41, &x), *tw = tensor_random(wn, 42, &w);
    struct dahl_tensor *tb = tensor_random((size_t)n_out, 43, &b), *tdy = tensor_random((size_t)n_out, 44, &dy);
    struct dahl_tensor *tdw = tensor_random(wn, 45, &dw), *tdb = tensor_random((size_t)n_out, 46, &db);
    struct dahl_tensor *ty = tensor_of((size_t)n_out, NULL), *tdx = tensor_of((size_t)n_in, NULL);

    cr_assert_eq(dahl_insert_dense_forward(n_in, n_out, H(tx), H(tw), H(tb), H(ty)), 0);
    cr_assert_eq(dahl_insert_dense_backward_input(n_in, n_out, H(tdy), H(tw), H(tdx)), 0);
    cr_assert_eq(dahl_insert_dense_backward_weights(n_in, n_out, H(tx), H(tdy), H(tdw), H(tdb), STARPU_RW), 0);

    float *y = alloc_floats((size_t)n_out), *dx = alloc_floats((size_t)n_in);
    dahl_dense_forward(n_in, n_out, x, w, b, y);
    dahl_dense_backward_input(n_in, n_out, dy, w, dx);
    dahl_dense_backward_weights(n_in, n_out, x, dy, dw, db);
    assert_tensor_close(ty, y, (size_t)n_out, 1e-5f, "dense y");
    assert_tensor_close(tdx, dx, (size_t)n_in, 1e-5f, "dense dx");
    assert_tensor_close(tdw, dw, wn, 1e-5f, "dense dw");
    assert_tensor_close(tdb, db, (size_t)n_out, 1e-5f, "dense db");

    dahl_tensor_destroy(tx), dahl_tensor_destroy(tw), dahl_tensor_destroy(tb), dahl_tensor_destroy(tdy);
    dahl_tensor_destroy(tdw), dahl_tensor_destroy(tdb), dahl_tensor_destroy(ty), dahl_tensor_destroy(tdx);
    free(x), free(w), free(b), free(dy), free(dw), free(db), free(y), free(dx);
}

Test(codelets, dense_backward_weights_redux_sums_the_samples)
{
    const int n_in = 9, n_out = 4;
    const size_t wn = (size_t)(n_in * n_out);
    struct dahl_tensor *tx = dahl_tensor_create(2, (int[]){NSAMPLES, n_in});
    struct dahl_tensor *tdy = dahl_tensor_create(2, (int[]){NSAMPLES, n_out});
    float *x = alloc_floats(NSAMPLES * (size_t)n_in), *dy = alloc_floats(NSAMPLES * (size_t)n_out);
    fill(x, NSAMPLES * (size_t)n_in, 51);
    fill(dy, NSAMPLES * (size_t)n_out, 52);
    cr_assert_eq(dahl_tensor_write(tx, x, NSAMPLES * (size_t)n_in), 0);
    cr_assert_eq(dahl_tensor_write(tdy, dy, NSAMPLES * (size_t)n_out), 0);
    cr_assert_eq(dahl_tensor_split_batch(tx), 0);
    cr_assert_eq(dahl_tensor_split_batch(tdy), 0);
    float *dw, *db;
    struct dahl_tensor *tdw = tensor_random(wn, 53, &dw), *tdb = tensor_random((size_t)n_out, 54, &db);
    dahl_gradient_enable_redux(H(tdw));
    dahl_gradient_enable_redux(H(tdb));

    for (int i = 0; i < NSAMPLES; i++)
        cr_assert_eq(dahl_insert_dense_backward_weights(n_in, n_out, dahl_tensor_sample(tx, i),
                                                        dahl_tensor_sample(tdy, i), H(tdw), H(tdb), STARPU_REDUX),
                     0);

    for (size_t i = 0; i < NSAMPLES; i++)
        dahl_dense_backward_weights(n_in, n_out, x + i * (size_t)n_in, dy + i * (size_t)n_out, dw, db);
    assert_tensor_close(tdw, dw, wn, 1e-4f, "dense redux dw");
    assert_tensor_close(tdb, db, (size_t)n_out, 1e-4f, "dense redux db");

    dahl_tensor_destroy(tx), dahl_tensor_destroy(tdy), dahl_tensor_destroy(tdw), dahl_tensor_destroy(tdb);
    free(x), free(dy), free(dw), free(db);
}

Test(codelets, softmax_xent_matches_the_kernel)
{
    const int k = 10, label = 3;
    float *logits;
    struct dahl_tensor *tl = tensor_random((size_t)k, 61, &logits);
    struct dahl_tensor *td = tensor_of((size_t)k, NULL), *tm = tensor_of(2, NULL);

    cr_assert_eq(dahl_insert_softmax_xent(k, label, H(tl), H(td), H(tm)), 0);

    float dlogits[10], loss;
    int correct;
    dahl_softmax_xent(k, logits, label, &loss, dlogits, &correct);
    const float metrics[2] = {loss, (float)correct};
    assert_tensor_close(td, dlogits, (size_t)k, 0.0f, "dlogits");
    assert_tensor_close(tm, metrics, 2, 0.0f, "metrics {loss, correct}");

    dahl_tensor_destroy(tl), dahl_tensor_destroy(td), dahl_tensor_destroy(tm);
    free(logits);
}

Test(codelets, sgd_matches_the_kernel_with_and_without_momentum)
{
    const size_t n = 29;
    float *p, *g, *p2, *v;
    struct dahl_tensor *tp = tensor_random(n, 71, &p), *tg = tensor_random(n, 72, &g);
    struct dahl_tensor *tp2 = tensor_random(n, 73, &p2), *tv = tensor_random(n, 74, &v);

    cr_assert_eq(dahl_insert_sgd_update(H(tp), H(tg), NULL, 0.1f, 0.0f), 0);
    cr_assert_eq(dahl_insert_sgd_update(H(tp2), H(tg), H(tv), 0.05f, 0.9f), 0);

    dahl_sgd_update(n, p, g, NULL, 0.1f, 0.0f);
    dahl_sgd_update(n, p2, g, v, 0.05f, 0.9f);
    assert_tensor_close(tp, p, n, 0.0f, "sgd param");
    assert_tensor_close(tp2, p2, n, 0.0f, "sgd momentum param");
    assert_tensor_close(tv, v, n, 0.0f, "sgd velocity");

    dahl_tensor_destroy(tp), dahl_tensor_destroy(tg), dahl_tensor_destroy(tp2), dahl_tensor_destroy(tv);
    free(p), free(g), free(p2), free(v);
}

Test(codelets, zero_and_accumulate_match_the_kernels)
{
    const size_t n = 17;
    float *a, *b, *z;
    struct dahl_tensor *ta = tensor_random(n, 81, &a), *tb = tensor_random(n, 82, &b);
    struct dahl_tensor *tz = tensor_random(n, 83, &z);

    cr_assert_eq(dahl_insert_accumulate(H(ta), H(tb)), 0);
    cr_assert_eq(dahl_insert_zero(H(tz)), 0);

    dahl_accumulate(n, a, b);
    float zeros[17] = {0};
    assert_tensor_close(ta, a, n, 0.0f, "accumulate");
    assert_tensor_close(tz, zeros, n, 0.0f, "zero");

    dahl_tensor_destroy(ta), dahl_tensor_destroy(tb), dahl_tensor_destroy(tz);
    free(a), free(b), free(z);
}

Test(codelets, wrong_sizes_and_modes_are_refused)
{
    const struct dahl_conv2d_shape *s = &conv_shape;
    struct dahl_tensor *tx = tensor_of(conv_x_n(), NULL), *tw = tensor_of(conv_w_n(), NULL);
    struct dahl_tensor *tb = tensor_of((size_t)s->f, NULL), *ty = tensor_of(conv_y_n(), NULL);
    struct dahl_tensor *small = tensor_of(3, NULL), *two = tensor_of(2, NULL);
    starpu_data_handle_t ws = dahl_workspace_create(dahl_conv2d_workspace_bytes(s));
    starpu_data_handle_t tiny_ws = dahl_workspace_create(4);
    struct dahl_conv2d_shape bad = *s;
    bad.kh = 0;

    cr_assert_eq(dahl_insert_conv2d_forward(&bad, H(tx), H(tw), H(tb), H(ty), ws), -EINVAL);
    cr_assert_eq(dahl_insert_conv2d_forward(s, H(tx), H(tw), H(tb), H(small), ws), -EINVAL, "wrong y size");
    cr_assert_eq(dahl_insert_conv2d_forward(s, H(tx), H(tw), H(tb), H(ty), tiny_ws), -EINVAL, "small workspace");
    cr_assert_eq(dahl_insert_conv2d_backward_weights(s, H(tx), H(ty), H(tw), H(tb), STARPU_W, ws), -EINVAL,
                 "W is no gradient mode");
    cr_assert_eq(dahl_insert_dense_forward(0, 3, H(small), H(small), H(small), H(small)), -EINVAL);
    cr_assert_eq(dahl_insert_relu_forward(H(small), H(tx)), -EINVAL, "sizes differ");
    cr_assert_eq(dahl_insert_relu_forward(H(small), H(small)), -EINVAL, "in place");
    cr_assert_eq(dahl_insert_softmax_xent(3, 3, H(small), H(tb), H(two)), -EINVAL, "label out of range");
    cr_assert_eq(dahl_insert_softmax_xent(3, 2, H(small), H(tb), H(small)), -EINVAL, "metrics are 2 floats");
    cr_assert_eq(dahl_insert_accumulate(H(small), H(tx)), -EINVAL, "sizes differ");
    cr_assert_eq(dahl_insert_accumulate(H(small), H(small)), -EINVAL, "onto itself");
    cr_assert_eq(dahl_insert_sgd_update(H(small), H(small), NULL, 0.1f, 0.0f), -EINVAL, "param is grad");
    cr_assert_eq(dahl_insert_sgd_update(H(small), H(tb), H(tx), 0.1f, 0.9f), -EINVAL, "velocity size");
    cr_assert_null(dahl_workspace_create(0));
    cr_assert_eq(dahl_codelets_set_perfmodel(DAHL_PERFMODEL_REGRESSION), 0, "refused inserts submit nothing");

    dahl_workspace_destroy(ws), dahl_workspace_destroy(tiny_ws), dahl_workspace_destroy(NULL);
    dahl_tensor_destroy(tx), dahl_tensor_destroy(tw), dahl_tensor_destroy(tb), dahl_tensor_destroy(ty);
    dahl_tensor_destroy(small), dahl_tensor_destroy(two);
}

Test(codelets, perfmodel_kind_names_parse_strictly)
{
    enum dahl_perfmodel_kind k = DAHL_PERFMODEL_NL_REGRESSION;
    cr_assert_eq(dahl_perfmodel_kind_parse("history", &k), 0);
    cr_assert_eq(k, DAHL_PERFMODEL_HISTORY);
    cr_assert_eq(dahl_perfmodel_kind_parse("regression", &k), 0);
    cr_assert_eq(k, DAHL_PERFMODEL_REGRESSION);
    cr_assert_eq(dahl_perfmodel_kind_parse("nl-regression", &k), 0);
    cr_assert_eq(k, DAHL_PERFMODEL_NL_REGRESSION);
    cr_assert_eq(dahl_perfmodel_kind_parse("History", &k), -EINVAL);
    cr_assert_eq(dahl_perfmodel_kind_parse("nl_regression", &k), -EINVAL);
    cr_assert_eq(dahl_perfmodel_kind_parse("", &k), -EINVAL);
    cr_assert_eq(dahl_perfmodel_kind_parse(NULL, &k), -EINVAL);
    cr_assert_eq(k, DAHL_PERFMODEL_NL_REGRESSION, "a refused name leaves *out alone");
    cr_assert_str_eq(dahl_perfmodel_kind_name(DAHL_PERFMODEL_REGRESSION), "regression");
    cr_assert_eq(dahl_codelets_set_perfmodel((enum dahl_perfmodel_kind)42), -EINVAL);
}

Test(codelets, perfmodel_kind_is_fixed_once_a_task_was_submitted)
{
    cr_assert_eq(dahl_codelets_perfmodel(), DAHL_PERFMODEL_HISTORY, "history by default");
    cr_assert_eq(dahl_codelets_set_perfmodel(DAHL_PERFMODEL_NL_REGRESSION), 0);
    cr_assert_eq(dahl_codelets_set_perfmodel(DAHL_PERFMODEL_REGRESSION), 0);
    cr_assert_eq(dahl_codelets_perfmodel(), DAHL_PERFMODEL_REGRESSION);

    /* A regression-modelled task still computes the right thing. */
    float *x;
    struct dahl_tensor *tx = tensor_random(11, 91, &x), *ty = tensor_of(11, NULL);
    cr_assert_eq(dahl_insert_relu_forward(H(tx), H(ty)), 0);
    cr_assert_eq(dahl_codelets_set_perfmodel(DAHL_PERFMODEL_HISTORY), -EBUSY);
    cr_assert_eq(dahl_codelets_perfmodel(), DAHL_PERFMODEL_REGRESSION);
    float y[11];
    dahl_relu_forward(11, x, y);
    assert_tensor_close(ty, y, 11, 0.0f, "relu y under a regression model");
    dahl_tensor_destroy(tx), dahl_tensor_destroy(ty);
    free(x);
}

Test(codelets, symbols_are_the_calibration_contract)
{
    static const char *const expected[] = {
        "dahl_conv2d_forward", "dahl_conv2d_backward_input", "dahl_conv2d_backward_weights",
        "dahl_maxpool_forward", "dahl_maxpool_backward", "dahl_relu_forward", "dahl_relu_backward",
        "dahl_dense_forward", "dahl_dense_backward_input", "dahl_dense_backward_weights", "dahl_avgpool_forward",
        "dahl_avgpool_backward", "dahl_add_forward", "dahl_add_backward", "dahl_bn_stats", "dahl_bn_forward",
        "dahl_bn_forward_eval", "dahl_bn_backward_params", "dahl_bn_backward_input", "dahl_bn_running",
        "dahl_dropout_forward", "dahl_dropout_backward", "dahl_dropout_eval", "dahl_softmax_xent", "dahl_sgd_update", "dahl_accumulate", "dahl_zero",
    };
    size_t n = 0;
    const char *const *symbols = dahl_codelet_symbols(&n);
    cr_assert_eq(n, sizeof(expected) / sizeof(expected[0]));
    for (size_t i = 0; i < n; i++)
        cr_assert_str_eq(symbols[i], expected[i], "symbol %zu", i);
}

Test(codelets, footprints_tell_shapes_apart)
{
    restart_calibrating();
    /* Two conv shapes with the same input and output sizes (only the kernel differs)... */
    const struct dahl_conv2d_shape a = {.c = 1, .h = 5, .w = 5, .f = 1, .kh = 3, .kw = 3, .stride = 1, .pad = 1};
    const struct dahl_conv2d_shape b = {.c = 1, .h = 5, .w = 5, .f = 1, .kh = 1, .kw = 1, .stride = 1, .pad = 0};
    struct dahl_tensor *x = tensor_of(25, NULL), *wa = tensor_of(9, NULL), *wb = tensor_of(1, NULL);
    struct dahl_tensor *bias = tensor_of(1, NULL), *y = tensor_of(25, NULL);
    starpu_data_handle_t ws = dahl_workspace_create(dahl_conv2d_workspace_bytes(&a) + dahl_conv2d_workspace_bytes(&b));
    /* ...and two dense shapes with the same weight count. */
    struct dahl_tensor *v2 = tensor_of(2, NULL), *v3 = tensor_of(3, NULL), *w6 = tensor_of(6, NULL);
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(dahl_insert_conv2d_forward(&a, H(x), H(wa), H(bias), H(y), ws), 0);
        cr_assert_eq(dahl_insert_conv2d_forward(&b, H(x), H(wb), H(bias), H(y), ws), 0);
    }
    struct dahl_tensor *y3 = tensor_of(3, NULL), *y2 = tensor_of(2, NULL);
    cr_assert_eq(dahl_insert_dense_forward(2, 3, H(v2), H(w6), H(v3), H(y3)), 0);
    cr_assert_eq(dahl_insert_dense_forward(3, 2, H(v3), H(w6), H(v2), H(y2)), 0);
    dahl_workspace_destroy(ws);
    dahl_tensor_destroy(x), dahl_tensor_destroy(wa), dahl_tensor_destroy(wb), dahl_tensor_destroy(bias);
    dahl_tensor_destroy(y), dahl_tensor_destroy(v2), dahl_tensor_destroy(v3), dahl_tensor_destroy(w6);
    dahl_tensor_destroy(y3), dahl_tensor_destroy(y2);
    dahl_engine_stop(); /* writes the history files */

    cr_assert_eq(history_entries("dahl_conv2d_forward"), 2);
    cr_assert_eq(history_entries("dahl_dense_forward"), 2);
}
