/* Tests of the CPU kernels of dense layers, the loss, the update, the reductions and the layers of residual
 * networks (batch normalisation, add, dropout): each forward against a naive loop or the definition written
 * here, each backward against central finite differences computed in double (kernel_test_util.h). */
#include <criterion/criterion.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dahl_kernels.h"
#include "kernel_test_util.h"

static void ref_dense(int n_in, int n_out, const double *x, const double *w, const double *b, double *y)
{
    for (int o = 0; o < n_out; o++) {
        y[o] = b[o];
        for (int i = 0; i < n_in; i++) {
            y[o] += w[(size_t)o * n_in + i] * x[i];
        }
    }
}

Test(kernels, dense_forward_matches_naive_loops)
{
    rng_seed(7);
    const int n_in = 37, n_out = 11;
    float *x = random_floats(n_in), *w = random_floats((size_t)n_in * n_out), *b = random_floats(n_out);
    float *y = alloc_or_fail(n_out * sizeof(float));
    double *xd = to_double(x, n_in), *wd = to_double(w, (size_t)n_in * n_out), *bd = to_double(b, n_out);
    double *yd = alloc_or_fail(n_out * sizeof(double));
    memset(y, 0xff, n_out * sizeof(float));
    dahl_dense_forward(n_in, n_out, x, w, b, y);
    ref_dense(n_in, n_out, xd, wd, bd, yd);
    expect_all_close("dense y", y, yd, n_out);
    free(x), free(w), free(b), free(y), free(xd), free(wd), free(bd), free(yd);
}

Test(kernels, dense_backward_matches_finite_differences_and_accumulates)
{
    rng_seed(8);
    const int n_in = 7, n_out = 5;
    const size_t nw = (size_t)n_in * n_out;
    float *x = random_floats(n_in), *w = random_floats(nw), *dy = random_floats(n_out);
    double *xd = to_double(x, n_in), *wd = to_double(w, nw), *r = to_double(dy, n_out);
    double bd[5] = {0}, yd[5];
    float dx[7], dw[35], db[5];
    memset(dx, 0xff, sizeof dx);
    for (size_t i = 0; i < nw; i++) {
        dw[i] = 1.0f;
    }
    for (int i = 0; i < n_out; i++) {
        db[i] = 2.0f;
    }
    dahl_dense_backward_input(n_in, n_out, dy, w, dx);
    dahl_dense_backward_weights(n_in, n_out, x, dy, dw, db);
    dahl_dense_backward_weights(n_in, n_out, x, dy, dw, db);

    /* Each tensor perturbed in turn; loss = r . dense(x, w, b). */
    double *tensors[3] = {xd, wd, bd};
    const size_t sizes[3] = {(size_t)n_in, nw, (size_t)n_out};
    for (int t = 0; t < 3; t++) {
        for (size_t i = 0; i < sizes[t]; i++) {
            const double keep = tensors[t][i];
            tensors[t][i] = keep + FD_EPS;
            ref_dense(n_in, n_out, xd, wd, bd, yd);
            const double up = dot(r, yd, n_out);
            tensors[t][i] = keep - FD_EPS;
            ref_dense(n_in, n_out, xd, wd, bd, yd);
            const double down = dot(r, yd, n_out);
            tensors[t][i] = keep;
            const double fd = (up - down) / (2.0 * FD_EPS);
            if (t == 0) {
                expect_close("dense dx", i, dx[i], fd);
            } else if (t == 1) {
                expect_close("dense dw", i, dw[i], 1.0 + 2.0 * fd);
            } else {
                expect_close("dense db", i, db[i], 2.0 + 2.0 * fd);
            }
        }
    }
    free(x), free(w), free(dy), free(xd), free(wd), free(r);
}

/* The binary tree of dahl_group_grads_run over the n terms t[0..n) (each nw floats), into out (nw floats):
 * equal neighbours merge (lower += higher), then the unequal ones fold from the top. Clobbers t. */
static void tree_sum(float *t, int n, size_t nw, float *out)
{
    int size[40], at[40], top = 0;
    for (int s = 0; s < n; s++) {
        at[top] = s;
        size[top++] = 1;
        while (top >= 2 && size[top - 1] == size[top - 2]) {
            for (size_t k = 0; k < nw; k++)
                t[(size_t)at[top - 2] * nw + k] += t[(size_t)at[top - 1] * nw + k];
            size[top - 2] *= 2;
            top--;
        }
    }
    for (; top >= 2; top--)
        for (size_t k = 0; k < nw; k++)
            t[(size_t)at[top - 2] * nw + k] += t[(size_t)at[top - 1] * nw + k];
    memcpy(out, t, nw * sizeof(float));
}

/* A call over n samples gives the bits of n one-sample calls: forward and backward_input sample by sample,
 * backward_weights accumulating sample after sample, or (tree) the per-sample gradients summed by the
 * gradient tree. Widths with and without a 16-float tail, n across the blocks of 4 samples. */
Test(kernels, dense_over_n_samples_gives_the_bits_of_one_sample_calls)
{
    static const int shapes[][2] = {{37, 11}, {64, 3}, {5, 4}, {203, 17}};
    static const int ns[] = {1, 2, 3, 4, 5, 7, 8, 9, 12};
    rng_seed(31);
    for (size_t k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++) {
        const int n_in = shapes[k][0], n_out = shapes[k][1];
        const size_t nw = (size_t)n_in * n_out;
        for (size_t j = 0; j < sizeof(ns) / sizeof(ns[0]); j++) {
            const int n = ns[j];
            float *x = random_floats((size_t)n * n_in), *w = random_floats(nw), *b = random_floats(n_out);
            float *dy = random_floats((size_t)n * n_out);
            float *y = alloc_or_fail((size_t)n * n_out * sizeof(float)), *y1 = alloc_or_fail((size_t)n * n_out * sizeof(float));
            float *dx = alloc_or_fail((size_t)n * n_in * sizeof(float)), *dx1 = alloc_or_fail((size_t)n * n_in * sizeof(float));
            float *dw = random_floats(nw), *dw1 = alloc_or_fail(nw * sizeof(float));
            float *db = random_floats(n_out), *db1 = alloc_or_fail(n_out * sizeof(float));
            memcpy(dw1, dw, nw * sizeof(float));
            memcpy(db1, db, n_out * sizeof(float));
            dahl_dense_forward_n(n_in, n_out, n, x, w, b, y);
            dahl_dense_backward_input_n(n_in, n_out, n, dy, w, dx);
            dahl_dense_backward_weights_n(n_in, n_out, n, x, dy, dw, db, false);
            for (int s = 0; s < n; s++) {
                dahl_dense_forward(n_in, n_out, x + (size_t)s * n_in, w, b, y1 + (size_t)s * n_out);
                dahl_dense_backward_input(n_in, n_out, dy + (size_t)s * n_out, w, dx1 + (size_t)s * n_in);
                dahl_dense_backward_weights(n_in, n_out, x + (size_t)s * n_in, dy + (size_t)s * n_out, dw1, db1);
            }
            cr_expect(memcmp(y, y1, (size_t)n * n_out * sizeof(float)) == 0, "forward %dx%d n=%d", n_in, n_out, n);
            cr_expect(memcmp(dx, dx1, (size_t)n * n_in * sizeof(float)) == 0, "backward_input %dx%d n=%d", n_in, n_out, n);
            cr_expect(memcmp(dw, dw1, nw * sizeof(float)) == 0 && memcmp(db, db1, n_out * sizeof(float)) == 0,
                      "backward_weights %dx%d n=%d", n_in, n_out, n);

            /* tree: from zero, as a task's gradient slot is, against per-sample gradients summed by the tree */
            float *tw = alloc_or_fail((size_t)n * nw * sizeof(float)), *tb = alloc_or_fail((size_t)n * n_out * sizeof(float));
            memset(tw, 0, (size_t)n * nw * sizeof(float));
            memset(tb, 0, (size_t)n * n_out * sizeof(float));
            for (int s = 0; s < n; s++)
                dahl_dense_backward_weights(n_in, n_out, x + (size_t)s * n_in, dy + (size_t)s * n_out,
                                            tw + (size_t)s * nw, tb + (size_t)s * n_out);
            tree_sum(tw, n, nw, dw1);
            tree_sum(tb, n, (size_t)n_out, db1);
            memset(dw, 0, nw * sizeof(float));
            memset(db, 0, n_out * sizeof(float));
            dahl_dense_backward_weights_n(n_in, n_out, n, x, dy, dw, db, true);
            cr_expect(memcmp(dw, dw1, nw * sizeof(float)) == 0 && memcmp(db, db1, n_out * sizeof(float)) == 0,
                      "backward_weights tree %dx%d n=%d", n_in, n_out, n);
            free(x), free(w), free(b), free(dy), free(y), free(y1), free(dx), free(dx1), free(dw), free(dw1);
            free(db), free(db1), free(tw), free(tb);
        }
    }
}

/* The baseline, AVX2 and AVX-512 variants (those this CPU runs) give the same bits on every pass. */
Test(kernels, dense_variants_give_the_same_bits)
{
    const int n_in = 203, n_out = 17, n = 5;
    const size_t nw = (size_t)n_in * n_out;
    rng_seed(33);
    float *x = random_floats((size_t)n * n_in), *w = random_floats(nw), *b = random_floats(n_out);
    float *dy = random_floats((size_t)n * n_out);
    float *out[3][4] = {{NULL}};
    int ran = 0;
    for (int v = 0; v < 3; v++) {
        if (dahl_dense_force_variant(v) != 0)
            continue;
        float *y = alloc_or_fail((size_t)n * n_out * sizeof(float)), *dx = alloc_or_fail((size_t)n * n_in * sizeof(float));
        float *dw = alloc_or_fail(nw * sizeof(float)), *dwt = alloc_or_fail(nw * sizeof(float));
        float db[17] = {0}, dbt[17] = {0};
        memset(dw, 0, nw * sizeof(float));
        memset(dwt, 0, nw * sizeof(float));
        dahl_dense_forward_n(n_in, n_out, n, x, w, b, y);
        dahl_dense_backward_input_n(n_in, n_out, n, dy, w, dx);
        dahl_dense_backward_weights_n(n_in, n_out, n, x, dy, dw, db, false);
        dahl_dense_backward_weights_n(n_in, n_out, n, x, dy, dwt, dbt, true);
        out[v][0] = y, out[v][1] = dx, out[v][2] = dw, out[v][3] = dwt;
        if (ran++ > 0) {
            cr_expect(memcmp(y, out[0][0], (size_t)n * n_out * sizeof(float)) == 0, "forward, variant %d", v);
            cr_expect(memcmp(dx, out[0][1], (size_t)n * n_in * sizeof(float)) == 0, "backward_input, variant %d", v);
            cr_expect(memcmp(dw, out[0][2], nw * sizeof(float)) == 0, "backward_weights, variant %d", v);
            cr_expect(memcmp(dwt, out[0][3], nw * sizeof(float)) == 0, "backward_weights tree, variant %d", v);
        }
    }
    cr_expect_eq(dahl_dense_force_variant(-1), 0);
    cr_expect_eq(dahl_dense_force_variant(3), -1, "no variant 3");
    for (int v = 0; v < 3; v++)
        for (int k = 0; k < 4; k++)
            free(out[v][k]);
    free(x), free(w), free(b), free(dy);
    if (ran < 2)
        cr_log_warn("only the baseline dense variant runs on this CPU: nothing to compare");
}

Test(kernels, dense_cost_helpers_on_a_known_shape)
{
    cr_expect_eq(dahl_dense_forward_flops(100, 10), 2.0 * 100 * 10 + 10);
    cr_expect_eq(dahl_dense_backward_input_flops(100, 10), 2.0 * 100 * 10);
    cr_expect_eq(dahl_dense_backward_weights_flops(100, 10), 2.0 * 100 * 10 + 10);
    cr_expect_eq(dahl_dense_forward_bytes(100, 10), 4 * (100 + 1000 + 20));
    cr_expect_eq(dahl_dense_backward_input_bytes(100, 10), 4 * (10 + 1000 + 100));
    cr_expect_eq(dahl_dense_backward_weights_bytes(100, 10), 4 * (100 + 10 + 2000 + 20));
}

/* ---- softmax + cross-entropy --------------------------------------------------------------------------- */

/* -log softmax(l)[label], the naive way, in long double (exp(1000) still fits there). */
static double ref_xent(int k, const double *l, int label)
{
    long double sum = 0.0L;
    for (int i = 0; i < k; i++) {
        sum += expl((long double)l[i]);
    }
    return (double)(logl(sum) - (long double)l[label]);
}

Test(kernels, softmax_xent_loss_gradient_and_prediction)
{
    rng_seed(9);
    enum { K = 10 };
    float l[K], dl[K];
    for (int i = 0; i < K; i++) {
        l[i] = 3.0f * rng_uniform();
    }
    for (int label = 0; label < K; label++) {
        float loss;
        int correct = -1;
        dahl_softmax_xent(K, l, label, &loss, dl, &correct);
        double ld[K];
        for (int i = 0; i < K; i++) {
            ld[i] = l[i];
        }
        expect_close("xent loss", (size_t)label, loss, ref_xent(K, ld, label));
        for (int i = 0; i < K; i++) {
            const double keep = ld[i];
            ld[i] = keep + FD_EPS;
            const double up = ref_xent(K, ld, label);
            ld[i] = keep - FD_EPS;
            const double down = ref_xent(K, ld, label);
            ld[i] = keep;
            /* The loss is curved here: the central difference is exact to O(eps^2) ~ 1e-7. */
            cr_expect_leq(fabs(dl[i] - (up - down) / (2.0 * FD_EPS)), 1e-5, "xent dlogits[%d], label %d", i,
                          label);
        }
        int argmax = 0;
        for (int i = 1; i < K; i++) {
            argmax = l[i] > l[argmax] ? i : argmax;
        }
        cr_expect_eq(correct, argmax == label, "label %d, argmax %d", label, argmax);
    }
}

Test(kernels, softmax_xent_is_stable_for_large_logits)
{
    /* Shifting every logit changes neither the loss nor the gradient; 1000 overflows a naive float exp. */
    const float big[3] = {1000.0f, 1001.0f, 999.0f}, small[3] = {0.0f, 1.0f, -1.0f};
    float loss_big, loss_small, d_big[3], d_small[3];
    int c_big, c_small;
    dahl_softmax_xent(3, big, 0, &loss_big, d_big, &c_big);
    dahl_softmax_xent(3, small, 0, &loss_small, d_small, &c_small);
    cr_assert(isfinite(loss_big));
    const double want = log(exp(0.0) + exp(1.0) + exp(-1.0)); /* -log softmax[0] = 1.4076 */
    cr_expect_float_eq(loss_big, want, 1e-5);
    cr_expect_float_eq(loss_small, want, 1e-5);
    for (int i = 0; i < 3; i++) {
        cr_expect(isfinite(d_big[i]));
        cr_expect_float_eq(d_big[i], d_small[i], 1e-6, "dlogits[%d]", i);
    }
    cr_expect_eq(c_big, 0);
    /* A confidently right prediction: loss ~ 0, not NaN; a confidently wrong one: loss ~ 1000, not inf. */
    const float sure[2] = {1000.0f, -1000.0f};
    float loss, d[2];
    int correct;
    dahl_softmax_xent(2, sure, 0, &loss, d, &correct);
    cr_expect_float_eq(loss, 0.0f, 1e-6);
    cr_expect_eq(correct, 1);
    dahl_softmax_xent(2, sure, 1, &loss, d, &correct);
    cr_expect_float_eq(loss, 2000.0f, 1e-2);
    cr_expect_float_eq(d[0], 1.0f, 1e-6);
    cr_expect_float_eq(d[1], -1.0f, 1e-6);
    cr_expect_eq(correct, 0);
}

Test(kernels, softmax_xent_in_place)
{
    float l[4] = {0.5f, -1.0f, 2.0f, 0.0f}, copy[4], d[4], loss_a, loss_b;
    int ca, cb;
    memcpy(copy, l, sizeof l);
    dahl_softmax_xent(4, copy, 2, &loss_a, d, &ca);
    dahl_softmax_xent(4, l, 2, &loss_b, l, &cb);
    cr_expect_eq(loss_a, loss_b);
    cr_expect_arr_eq(l, d, sizeof d);
    cr_expect_eq(ca, 1);
    cr_expect_eq(cb, 1);
    cr_expect_eq(dahl_softmax_xent_flops(10), 52.0);
    cr_expect_eq(dahl_softmax_xent_bytes(10), 4 * 23);
}

/* ---- SGD ----------------------------------------------------------------------------------------------- */

Test(kernels, sgd_without_momentum)
{
    float p[3] = {1.0f, -2.0f, 0.5f};
    const float g[3] = {0.5f, -1.0f, 0.0f};
    dahl_sgd_update(3, p, g, NULL, 0.1f, 0.9f); /* no velocity buffer: plain SGD whatever the momentum */
    cr_expect_float_eq(p[0], 0.95f, 1e-7);
    cr_expect_float_eq(p[1], -1.9f, 1e-7);
    cr_expect_float_eq(p[2], 0.5f, 1e-7);
    float v[3] = {9.0f, 9.0f, 9.0f};
    dahl_sgd_update(3, p, g, v, 0.1f, 0.0f); /* momentum 0: plain SGD, velocity untouched */
    cr_expect_float_eq(p[0], 0.9f, 1e-7);
    cr_expect_float_eq(p[1], -1.8f, 1e-7);
    cr_expect_eq(v[0], 9.0f);
    cr_expect_eq(dahl_sgd_update_flops(10, false), 20.0);
    cr_expect_eq(dahl_sgd_update_bytes(10, false), 120);
}

Test(kernels, sgd_with_momentum)
{
    float p[2] = {1.0f, 1.0f}, v[2] = {0.0f, 0.0f};
    const float g[2] = {1.0f, -2.0f};
    /* step 1: v = g = (1, -2); p = 1 - 0.1 v = (0.9, 1.2) */
    dahl_sgd_update(2, p, g, v, 0.1f, 0.5f);
    cr_expect_float_eq(v[0], 1.0f, 1e-7);
    cr_expect_float_eq(v[1], -2.0f, 1e-7);
    cr_expect_float_eq(p[0], 0.9f, 1e-6);
    cr_expect_float_eq(p[1], 1.2f, 1e-6);
    /* step 2: v = 0.5 v + g = (1.5, -3); p = p - 0.1 v = (0.75, 1.5) */
    dahl_sgd_update(2, p, g, v, 0.1f, 0.5f);
    cr_expect_float_eq(v[0], 1.5f, 1e-7);
    cr_expect_float_eq(v[1], -3.0f, 1e-7);
    cr_expect_float_eq(p[0], 0.75f, 1e-6);
    cr_expect_float_eq(p[1], 1.5f, 1e-6);
    cr_expect_eq(dahl_sgd_update_flops(10, true), 40.0);
    cr_expect_eq(dahl_sgd_update_bytes(10, true), 200);
}

/* ---- reductions ---------------------------------------------------------------------------------------- */

Test(kernels, accumulate_zero_and_scale)
{
    float dst[5] = {1, 2, 3, 4, 5};
    const float src[5] = {0.5f, -2, 0, 1, 10};
    dahl_accumulate(5, dst, src);
    const float want[5] = {1.5f, 0, 3, 5, 15};
    cr_expect_arr_eq(dst, want, sizeof dst);
    dahl_scale(5, dst, 2.0f);
    const float doubled[5] = {3, 0, 6, 10, 30};
    cr_expect_arr_eq(dst, doubled, sizeof dst);
    dahl_zero(5, dst);
    const float zeros[5] = {0};
    cr_expect_arr_eq(dst, zeros, sizeof dst);
    cr_expect_eq(dahl_accumulate_flops(8), 8.0);
    cr_expect_eq(dahl_accumulate_bytes(8), 96);
    cr_expect_eq(dahl_zero_flops(8), 0.0);
    cr_expect_eq(dahl_zero_bytes(8), 32);
    cr_expect_eq(dahl_scale_flops(8), 8.0);
    cr_expect_eq(dahl_scale_bytes(8), 64);
}

/* dahl_kernels_init pins OpenBLAS to one thread; a kernel still works after it. */
Test(kernels, kernels_work_after_init)
{
    dahl_kernels_init();
    const float x[2] = {1.0f, 2.0f}, w[2] = {3.0f, 4.0f}, b[1] = {0.5f};
    float y[1];
    dahl_dense_forward(2, 1, x, w, b, y);
    cr_expect_float_eq(y[0], 11.5f, 1e-6);
}

/* ---- batch normalisation and add ------------------------------------------------------------------------ */

/* Training-mode batch norm over n samples [C][HW] in double: the batch's mean and biased variance per channel. */
static void ref_bn(int n, int c, int hw, const double *x, const double *gamma, const double *beta, double *y)
{
    for (int ch = 0; ch < c; ch++) {
        double s = 0, s2 = 0, m = (double)n * hw;
        for (int k = 0; k < n; k++)
            for (int i = 0; i < hw; i++) {
                double v = x[((size_t)k * c + ch) * hw + i];
                s += v;
                s2 += v * v;
            }
        double mean = s / m, inv = 1.0 / sqrt(s2 / m - mean * mean + 1e-5);
        for (int k = 0; k < n; k++)
            for (int i = 0; i < hw; i++) {
                size_t at = ((size_t)k * c + ch) * hw + i;
                y[at] = gamma[ch] * (x[at] - mean) * inv + beta[ch];
            }
    }
}

/* dot(r, ref_bn(...)) with one of x, gamma or beta moved by +-FD_EPS at index i: the central difference. */
static double bn_difference(int n, int c, int hw, double *v, size_t i, const double *x, const double *gamma,
                            const double *beta, const double *r, double *y)
{
    size_t all = (size_t)n * c * hw;
    const double keep = v[i];
    v[i] = keep + FD_EPS;
    ref_bn(n, c, hw, x, gamma, beta, y);
    const double up = dot(r, y, all);
    v[i] = keep - FD_EPS;
    ref_bn(n, c, hw, x, gamma, beta, y);
    const double down = dot(r, y, all);
    v[i] = keep;
    return (up - down) / (2.0 * FD_EPS);
}

Test(kernels, batchnorm_matches_its_definition_and_finite_differences)
{
    rng_seed(11);
    const int n = 3, c = 2, hw = 5;
    const size_t all = (size_t)n * c * hw;
    float *x = random_floats(all), *dy = random_floats(all), *gamma = random_floats((size_t)c),
          *beta = random_floats((size_t)c);
    float stats[2 * 2 + 1] = {0}, scratch[4], dgamma[2] = {0}, dbeta[2] = {0};
    float *y = alloc_or_fail(all * sizeof(float)), *dx = alloc_or_fail(all * sizeof(float));
    for (int k = 0; k < n; k++)
        dahl_bn_stats(c, hw, x + (size_t)k * c * hw, stats);
    cr_expect_eq(stats[2 * c], (float)(n * hw), "the count of values per channel");
    dahl_bn_forward(c, hw, n, x, stats, gamma, beta, y, scratch);
    for (int k = 0; k < n; k++)
        dahl_bn_backward_params(c, hw, x + (size_t)k * c * hw, dy + (size_t)k * c * hw, stats, dgamma, dbeta);
    memset(dx, 0xff, all * sizeof(float));
    dahl_bn_backward_input(c, hw, n, x, dy, stats, gamma, dgamma, dbeta, dx);

    double *xd = to_double(x, all), *gd = to_double(gamma, (size_t)c), *bd = to_double(beta, (size_t)c);
    double *r = to_double(dy, all), *yd = alloc_or_fail(all * sizeof(double));
    ref_bn(n, c, hw, xd, gd, bd, yd);
    for (size_t i = 0; i < all; i++)
        expect_close("bn y", i, y[i], yd[i]);
    for (size_t i = 0; i < all; i++)
        expect_close("bn dx", i, dx[i], bn_difference(n, c, hw, xd, i, xd, gd, bd, r, yd));
    for (size_t i = 0; i < (size_t)c; i++) {
        expect_close("bn dgamma", i, dgamma[i], bn_difference(n, c, hw, gd, i, xd, gd, bd, r, yd));
        expect_close("bn dbeta", i, dbeta[i], bn_difference(n, c, hw, bd, i, xd, gd, bd, r, yd));
    }

    /* running statistics: from mean 0 and variance 1, 0.1 of the batch's mean and unbiased variance */
    float running[4] = {0, 0, 1, 1}, ey[30];
    dahl_bn_running(c, stats, running);
    for (int ch = 0; ch < c; ch++) {
        double s = 0, s2 = 0, m = (double)n * hw;
        for (int k = 0; k < n; k++)
            for (int i = 0; i < hw; i++) {
                double v = xd[((size_t)k * c + ch) * hw + i];
                s += v;
                s2 += v * v;
            }
        double mean = s / m, var = (s2 / m - mean * mean) * m / (m - 1);
        expect_close("running mean", (size_t)ch, running[ch], 0.1 * mean);
        expect_close("running var", (size_t)ch, running[c + ch], 0.9 + 0.1 * var);
    }
    /* evaluation normalises with the running statistics */
    dahl_bn_forward_eval(c, hw, n, x, running, gamma, beta, ey, scratch);
    for (size_t i = 0; i < all; i++) {
        int ch = (int)(i / hw) % c;
        expect_close("bn eval y", i, ey[i],
                     gd[ch] * (xd[i] - running[ch]) / sqrt((double)running[c + ch] + 1e-5) + bd[ch]);
    }
    cr_expect_eq(dahl_bn_forward_flops(4, 9), 72.0);
    cr_expect_eq(dahl_bn_stats_bytes(4, 9), 4 * (36 + 9));
    free(x), free(dy), free(gamma), free(beta), free(y), free(dx), free(xd), free(gd), free(bd), free(r), free(yd);
}

Test(kernels, add_sums_and_passes_its_gradient_to_both_inputs)
{
    rng_seed(12);
    float *a = random_floats(37), *b = random_floats(37), *dy = random_floats(37), y[37], da[37], db[37];
    dahl_add_forward(37, a, b, y);
    dahl_add_backward(37, dy, da, db);
    for (int i = 0; i < 37; i++) {
        cr_expect_eq(y[i], a[i] + b[i]);
        cr_expect_eq(da[i], dy[i]);
        cr_expect_eq(db[i], dy[i]);
    }
    cr_expect_eq(dahl_add_forward_flops(37), 37.0);
    cr_expect_eq(dahl_add_backward_bytes(37), 4 * 3 * 37);
    free(a), free(b), free(dy);
}

Test(kernels, dropout_keeps_its_share_the_same_way_forward_and_backward)
{
    rng_seed(13);
    const size_t n = 4000;
    float *x = random_floats(n), *dy = random_floats(n), *y = alloc_or_fail(n * sizeof(float)),
          *dx = alloc_or_fail(n * sizeof(float)), *part = alloc_or_fail(n * sizeof(float));
    uint64_t key = dahl_dropout_key(1, 3, 7);
    cr_expect_neq(key, dahl_dropout_key(1, 3, 8), "another step, another mask");
    cr_expect_neq(key, dahl_dropout_key(1, 4, 7), "another layer, another mask");
    dahl_dropout_forward(n, x, y, key, 100, 30);
    dahl_dropout_backward(n, dy, dx, key, 100, 30);
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        bool keep = dahl_dropout_keep(key, 100 + i, 30);
        kept += keep;
        /* y = dL/dx-style: linear in x with the mask fixed, so dx is the same mask and scale applied to dy */
        cr_expect_eq(y[i], keep ? x[i] * (100.0f / 70.0f) : 0.0f);
        cr_expect_eq(dx[i], keep ? dy[i] * (100.0f / 70.0f) : 0.0f);
    }
    cr_expect(kept > n * 65 / 100 && kept < n * 75 / 100, "kept %zu of %zu at 30 %% dropped", kept, n);
    /* a task over the second half alone drops what the whole did there (the grain does not matter) */
    dahl_dropout_forward(n / 2, x + n / 2, part, key, 100 + n / 2, 30);
    cr_expect_eq(memcmp(part, y + n / 2, n / 2 * sizeof(float)), 0);
    /* 0 %: the evaluation's copy */
    dahl_dropout_forward(n, x, part, key, 0, 0);
    cr_expect_eq(memcmp(part, x, n * sizeof(float)), 0);
    cr_expect_eq(dahl_dropout_flops(10), 10.0);
    free(x), free(dy), free(y), free(dx), free(part);
}
