/* Benchmark: a dense layer's three passes over a group of n samples, as a task of grain n runs them on one
 * core: dahl's n-sample kernels (kernels/cpu/dense.c: the weights read once per 4 samples, the weight
 * gradient read and written once per call) against n one-sample OpenBLAS calls (SGEMV, SGEMV^T, SGER: what
 * dahl ran before, the weights streamed once per sample). Two shapes of LeNet's first dense layer: 28x28x3
 * inputs (400 -> 120, 192 KB of weights, cache-resident) and 512x512x3 (254016 -> 120, 122 MB).
 * Prints microseconds per sample for n = 1, 4 and 8, and the ratio OpenBLAS / dahl, all in one run.
 * Usage: dense_batch [--help]. */
#include <cblas.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "dahl_kernels.h"

struct layer {
    int n_in, n_out, n;
    float *x, *w, *b, *y, *dy, *dx, *dw, *db;
};

/* One pass over the group, dahl's way or OpenBLAS's per sample. */
static void pass(struct layer *l, int which, bool blas)
{
    const size_t ni = (size_t)l->n_in, no = (size_t)l->n_out;
    if (!blas) {
        if (which == 0)
            dahl_dense_forward_n(l->n_in, l->n_out, l->n, l->x, l->w, l->b, l->y);
        else if (which == 1)
            dahl_dense_backward_input_n(l->n_in, l->n_out, l->n, l->dy, l->w, l->dx);
        else
            dahl_dense_backward_weights_n(l->n_in, l->n_out, l->n, l->x, l->dy, l->dw, l->db, false);
        return;
    }
    for (int s = 0; s < l->n; s++) {
        if (which == 0) {
            memcpy(l->y + s * no, l->b, no * sizeof(float));
            cblas_sgemv(CblasRowMajor, CblasNoTrans, l->n_out, l->n_in, 1.0f, l->w, l->n_in, l->x + s * ni, 1, 1.0f,
                        l->y + s * no, 1);
        } else if (which == 1) {
            cblas_sgemv(CblasRowMajor, CblasTrans, l->n_out, l->n_in, 1.0f, l->w, l->n_in, l->dy + s * no, 1, 0.0f,
                        l->dx + s * ni, 1);
        } else {
            cblas_sger(CblasRowMajor, l->n_out, l->n_in, 1.0f, l->dy + s * no, 1, l->x + s * ni, 1, l->dw, l->n_in);
            for (size_t o = 0; o < no; o++)
                l->db[o] += l->dy[s * no + o];
        }
    }
}

/* One pass, for bench_seconds_per_call. */
struct pass_call {
    struct layer *l;
    int which;
    bool blas;
};

static void pass_once(void *ctx)
{
    const struct pass_call *p = ctx;
    pass(p->l, p->which, p->blas);
}

/* Microseconds per sample of a pass (bench_seconds_per_call: one warm-up, then MIN_SECONDS of calls). */
static double us_per_sample(struct layer *l, int which, bool blas)
{
    struct pass_call p = {.l = l, .which = which, .blas = blas};
    return bench_seconds_per_call(pass_once, &p) / l->n * 1e6;
}

int main(int argc, char **argv)
{
    const int done = bench_args(
        argc, argv,
        "usage: dense_batch\n"
        "Microseconds per sample of a dense layer's forward, backward_input and backward_weights over\n"
        "n = 1, 4, 8 samples: dahl's n-sample kernels against n one-sample OpenBLAS calls, one core.\n");
    if (done >= 0)
        return done;
    openblas_set_num_threads(1);
    dahl_kernels_init();
    static const int shapes[][2] = {{400, 120}, {254016, 120}};
    static const int groups[] = {1, 4, 8};
    static const char *const names[] = {"forward", "backward_input", "backward_weights"};
    printf("%-16s %-14s %3s %14s %14s %8s\n", "pass", "shape", "n", "openblas us/s", "dahl us/s", "ratio");
    for (size_t k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++) {
        for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++) {
            struct layer l = {.n_in = shapes[k][0], .n_out = shapes[k][1], .n = groups[g]};
            const size_t ni = (size_t)l.n_in, no = (size_t)l.n_out, n = (size_t)l.n;
            l.x = random_floats(n * ni), l.w = random_floats(ni * no), l.b = random_floats(no);
            l.dy = random_floats(n * no), l.dw = random_floats(ni * no), l.db = random_floats(no);
            l.y = malloc(n * no * sizeof(float)), l.dx = malloc(n * ni * sizeof(float));
            if (!l.x || !l.w || !l.b || !l.dy || !l.dw || !l.db || !l.y || !l.dx) {
                fprintf(stderr, "dense_batch: error: out of memory\n");
                return 1;
            }
            for (int which = 0; which < 3; which++) {
                const double blas = us_per_sample(&l, which, true), dahl = us_per_sample(&l, which, false);
                char shape[32];
                snprintf(shape, sizeof(shape), "%dx%d", l.n_in, l.n_out);
                printf("%-16s %-14s %3d %14.1f %14.1f %8.2f\n", names[which], shape, l.n, blas, dahl, blas / dahl);
            }
            free(l.x), free(l.w), free(l.b), free(l.dy), free(l.dw), free(l.db), free(l.y), free(l.dx);
        }
    }
    return 0;
}
