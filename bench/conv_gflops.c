/* Benchmark: how close dahl_conv2d_forward gets to the BLAS it runs on, on one core. Measures conv2d forward
 * GFLOP/s (the dispatching entry point, its AVX2 path where it picks AVX-512, and its im2col + SGEMM path)
 * on a small (3x28x28, 6 filters 5x5) and a large (3x512x512, 16 filters 3x3) sample, and single-threaded
 * cblas_sgemm GFLOP/s at n = 1024, and prints each conv's ratio to SGEMM, all in one run.
 * Usage: conv_gflops [--help]. OpenBLAS picks its kernels by CPU; OPENBLAS_CORETYPE overrides that. */
#include <cblas.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "dahl_kernels.h"

typedef void conv_forward_fn(const struct dahl_conv2d_shape *s, const float *x, const float *w, const float *b,
                              float *y, float *workspace);

/* The direct kernel with 8-float vectors even where AVX-512 is there; im2col where AVX2/FMA is missing
 * (the row then says so: "its AVX2 path" is printed only where it ran). */
static void forward_avx2(const struct dahl_conv2d_shape *s, const float *x, const float *w, const float *b,
                         float *y, float *workspace)
{
    if (!dahl_conv2d_forward_direct_bits(s, 256, x, w, b, y, workspace)) {
        dahl_conv2d_forward_im2col(s, x, w, b, y, workspace);
    }
}

/* One conv2d forward call's arguments, for bench_seconds_per_call. */
struct conv_call {
    const struct dahl_conv2d_shape *s;
    conv_forward_fn *forward;
    const float *x, *w, *b;
    float *y, *ws;
};

static void conv_once(void *ctx)
{
    const struct conv_call *c = ctx;
    c->forward(c->s, c->x, c->w, c->b, c->y, c->ws);
}

/* GFLOP/s of a conv2d forward implementation on shape s, or a negative value when memory runs out. */
static double conv_gflops(const struct dahl_conv2d_shape *s, conv_forward_fn *forward)
{
    const size_t nx = (size_t)s->c * s->h * s->w, nw = (size_t)s->f * s->c * s->kh * s->kw;
    const size_t ny = (size_t)s->f * dahl_conv2d_out_h(s) * dahl_conv2d_out_w(s);
    float *x = random_floats(nx), *w = random_floats(nw), *b = random_floats((size_t)s->f);
    float *y = malloc(ny * sizeof(float)), *ws = malloc(dahl_conv2d_workspace_bytes(s));
    double gflops = -1.0;
    if (x != NULL && w != NULL && b != NULL && y != NULL && ws != NULL) {
        struct conv_call c = {.s = s, .forward = forward, .x = x, .w = w, .b = b, .y = y, .ws = ws};
        gflops = dahl_conv2d_forward_flops(s) / bench_seconds_per_call(conv_once, &c) / 1e9;
    }
    free(x), free(w), free(b), free(y), free(ws);
    return gflops;
}

/* One square single-precision GEMM of size n, for bench_seconds_per_call. */
struct gemm_call {
    int n;
    const float *a, *b;
    float *c;
};

static void gemm_once(void *ctx)
{
    const struct gemm_call *g = ctx;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, g->n, g->n, g->n, 1.0f, g->a, g->n, g->b, g->n, 0.0f,
                g->c, g->n);
}

/* GFLOP/s of a square single-precision GEMM of size n (2 n^3 flops), or negative when memory runs out. */
static double sgemm_gflops(int n)
{
    const size_t nn = (size_t)n * n;
    float *a = random_floats(nn), *b = random_floats(nn), *c = calloc(nn, sizeof(float));
    double gflops = -1.0;
    if (a != NULL && b != NULL && c != NULL) {
        struct gemm_call g = {.n = n, .a = a, .b = b, .c = c};
        gflops = 2.0 * (double)n * n * n / bench_seconds_per_call(gemm_once, &g) / 1e9;
    }
    free(a), free(b), free(c);
    return gflops;
}

int main(int argc, char **argv)
{
    const int done = bench_args(
        argc, argv,
        "usage: conv_gflops\n"
        "Single-core GFLOP/s of dahl_conv2d_forward (3x28x28 and 3x512x512 inputs) next to cblas_sgemm\n"
        "(n = 1024). Set OPENBLAS_CORETYPE (e.g. Haswell, SkylakeX) to override OpenBLAS's CPU choice.\n");
    if (done >= 0)
        return done;
    openblas_set_num_threads(1);
    dahl_kernels_init();

    const struct dahl_conv2d_shape small = {.c = 3, .h = 28, .w = 28, .f = 6, .kh = 5, .kw = 5, .stride = 1,
                                            .pad = 2};
    const struct dahl_conv2d_shape large = {.c = 3, .h = 512, .w = 512, .f = 16, .kh = 3, .kw = 3,
                                            .stride = 1, .pad = 1};
    const int n = 1024;
    const double gemm = sgemm_gflops(n);
    const int bits = dahl_conv2d_direct_vector_bits();
    const bool avx2_row = bits == 512; /* the AVX2 path apart, only where the dispatcher picks AVX-512 */
    const struct {
        const char *name;
        const struct dahl_conv2d_shape *shape;
        conv_forward_fn *forward;
        bool shown;
    } runs[] = {
        {"conv2d_forward 3x28x28, 6 filters 5x5 pad 2", &small, dahl_conv2d_forward, true},
        {"  its direct AVX2/FMA path", &small, forward_avx2, avx2_row},
        {"  its im2col + sgemm path", &small, dahl_conv2d_forward_im2col, true},
        {"conv2d_forward 3x512x512, 16 filters 3x3 pad 1", &large, dahl_conv2d_forward, true},
        {"  its direct AVX2/FMA path", &large, forward_avx2, avx2_row},
        {"  its im2col + sgemm path", &large, dahl_conv2d_forward_im2col, true},
    };
    const size_t n_runs = sizeof runs / sizeof runs[0];
    double conv[sizeof runs / sizeof runs[0]];
    for (size_t i = 0; i < n_runs; i++) {
        if (!runs[i].shown) {
            conv[i] = 0.0;
            continue;
        }
        conv[i] = conv_gflops(runs[i].shape, runs[i].forward);
        if (conv[i] < 0) {
            fprintf(stderr, "conv_gflops: error: out of memory\n");
            return 1;
        }
    }
    if (gemm < 0) {
        fprintf(stderr, "conv_gflops: error: out of memory\n");
        return 1;
    }
    const char *coretype = getenv("OPENBLAS_CORETYPE");
    printf("openblas core: %s (OPENBLAS_CORETYPE=%s), 1 thread\n", openblas_get_corename(),
           coretype != NULL ? coretype : "unset");
    printf("conv2d_forward: %s on stride 1, im2col + sgemm otherwise\n",
           bits == 512   ? "direct kernel, AVX-512 (16-float vectors)"
           : bits == 256 ? "direct kernel, AVX2/FMA (8-float vectors)"
                         : "im2col (no AVX2/FMA on this CPU)");
    printf("%-48s %8s %8s\n", "kernel", "GFLOP/s", "of sgemm");
    printf("%-48s %8.2f %8.2f\n", "cblas_sgemm n=1024", gemm, 1.0);
    for (size_t i = 0; i < n_runs; i++) {
        if (!runs[i].shown) {
            continue;
        }
        printf("%-48s %8.2f %8.2f\n", runs[i].name, conv[i], conv[i] / gemm);
    }
    return 0;
}
