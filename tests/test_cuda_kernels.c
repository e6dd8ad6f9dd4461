/* Every CUDA kernel of kernels/cuda/ against its CPU kernel (kernels/cpu/) on random inputs, with explicit
 * tolerances: exact where the GPU does the CPU's operations in the CPU's order (pooling, ReLU, SGD,
 * reductions), relative 1e-4 where a GEMM sums in another order (conv2d, dense), 1e-6 for softmax's exp/log.
 * A plain program rather than a Criterion one: it must also run from the GPU bundle (scripts/gpu-bundle),
 * and it exits 77 (CTest: skipped, never passed) when no CUDA device is there. Exit 1 on any failed check. */
#include "cuda/dahl_kernels_cuda.h"
#include "dahl_kernels.h"
#include "dahl_random.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
static cudaStream_t stream;
static cublasHandle_t blas;
static uint64_t rng = 42;

/* Uniform in [-1, 1). With `coarse`, rounded to quarters: many equal values, so pooling ties get tested. */
static float *random_floats(size_t n, bool coarse)
{
    float *v = malloc(n * sizeof(float));
    if (v == NULL) {
        fprintf(stderr, "test_cuda_kernels: out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < n; i++) {
        float r = (float)((double)(dahl_splitmix64(&rng) >> 11) / 9007199254740992.0 * 2.0 - 1.0);
        v[i] = coarse ? floorf(r * 4.0f) / 4.0f : r;
    }
    return v;
}

static void check_cuda(cudaError_t err, const char *what)
{
    if (err != cudaSuccess) {
        fprintf(stderr, "test_cuda_kernels: %s: %s\n", what, cudaGetErrorString(err));
        exit(1);
    }
}

/* A device copy of n host floats (NULL host: n uninitialised floats). */
static float *to_device(const float *host, size_t n)
{
    void *d = NULL;
    check_cuda(cudaMalloc(&d, n * sizeof(float) + 1), "cudaMalloc");
    if (host != NULL)
        check_cuda(cudaMemcpy(d, host, n * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy to device");
    return d;
}

/* Waits for the stream, then copies n device floats into a new host array. */
static float *to_host(const float *dev, size_t n)
{
    check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    float *h = malloc(n * sizeof(float));
    check_cuda(cudaMemcpy(h, dev, n * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy to host");
    return h;
}

static void check_ret(int ret, const char *what)
{
    if (ret != 0) {
        fprintf(stderr, "FAIL %s: the kernel refused to run: %s\n", what, dahl_cuda_error());
        failures++;
    }
}

/* Compares got (device) with want (host): |got - want| <= rel * (1 + |want|) everywhere (rel 0: bit-equal). */
static void compare(const char *what, const float *dev_got, const float *want, size_t n, double rel)
{
    float *got = to_host(dev_got, n);
    double worst = 0.0;
    size_t bad_at = n;
    for (size_t i = 0; i < n; i++) {
        const double err = fabs((double)got[i] - (double)want[i]) / (1.0 + fabs((double)want[i]));
        const bool ok = rel == 0.0 ? memcmp(&got[i], &want[i], sizeof(float)) == 0 : err <= rel;
        if (!ok && bad_at == n)
            bad_at = i;
        if (err > worst)
            worst = err;
    }
    if (bad_at == n) {
        printf("ok   %-48s n=%-8zu max rel err %.2e (tolerance %.0e)\n", what, n, worst, rel);
    } else {
        printf("FAIL %-48s n=%-8zu first at %zu: got %.9g, want %.9g (tolerance %.0e, max rel err %.2e)\n", what,
               n, bad_at, (double)got[bad_at], (double)want[bad_at], rel, worst);
        failures++;
    }
    free(got);
}

static size_t conv_x(const struct dahl_conv2d_shape *s) { return (size_t)s->c * s->h * s->w; }
static size_t conv_w(const struct dahl_conv2d_shape *s) { return (size_t)s->f * s->c * s->kh * s->kw; }
static size_t conv_y(const struct dahl_conv2d_shape *s)
{
    return (size_t)s->f * dahl_conv2d_out_h(s) * dahl_conv2d_out_w(s);
}

static void test_conv2d(const char *name, struct dahl_conv2d_shape s)
{
    char what[96];
    const size_t nx = conv_x(&s), nw = conv_w(&s), ny = conv_y(&s);
    const size_t ws_bytes = dahl_conv2d_workspace_bytes(&s);
    float *x = random_floats(nx, false), *w = random_floats(nw, false), *b = random_floats((size_t)s.f, false);
    float *dy = random_floats(ny, false), *dw = random_floats(nw, false), *db = random_floats((size_t)s.f, false);
    float *y = malloc(ny * sizeof(float)), *dx = malloc(nx * sizeof(float)), *ws = malloc(ws_bytes);
    float *d_x = to_device(x, nx), *d_w = to_device(w, nw), *d_b = to_device(b, (size_t)s.f);
    float *d_dy = to_device(dy, ny), *d_dw = to_device(dw, nw), *d_db = to_device(db, (size_t)s.f);
    float *d_y = to_device(NULL, ny), *d_dx = to_device(NULL, nx), *d_ws = to_device(NULL, ws_bytes / sizeof(float));

    dahl_conv2d_forward_im2col(&s, x, w, b, y, ws);
    check_ret(dahl_cuda_conv2d_forward(&s, d_x, d_w, d_b, d_y, d_ws, stream, blas), name);
    snprintf(what, sizeof(what), "conv2d forward %s", name);
    compare(what, d_y, y, ny, 1e-4);

    dahl_conv2d_backward_input(&s, dy, w, dx, ws);
    check_ret(dahl_cuda_conv2d_backward_input(&s, d_dy, d_w, d_dx, d_ws, stream, blas), name);
    snprintf(what, sizeof(what), "conv2d backward_input %s", name);
    compare(what, d_dx, dx, nx, 1e-4);

    /* dw and db start random on both sides: the kernels must ACCUMULATE. */
    dahl_conv2d_backward_weights(&s, x, dy, dw, db, ws);
    check_ret(dahl_cuda_conv2d_backward_weights(&s, d_x, d_dy, d_dw, d_db, d_ws, stream, blas), name);
    snprintf(what, sizeof(what), "conv2d backward_weights dw %s", name);
    compare(what, d_dw, dw, nw, 1e-4);
    snprintf(what, sizeof(what), "conv2d backward_weights db %s", name);
    compare(what, d_db, db, (size_t)s.f, 1e-4);

    float *host[] = {x, w, b, dy, dw, db, y, dx, ws};
    for (size_t i = 0; i < sizeof(host) / sizeof(host[0]); i++)
        free(host[i]);
    float *dev[] = {d_x, d_w, d_b, d_dy, d_dw, d_db, d_y, d_dx, d_ws};
    for (size_t i = 0; i < sizeof(dev) / sizeof(dev[0]); i++)
        cudaFree(dev[i]);
}

/* Max-pool (avg false) or average pool (avg true): the same window order, so the same bits. */
static void test_pool(const char *name, struct dahl_maxpool_shape s, bool avg)
{
    char what[96];
    const char *kind = avg ? "avgpool" : "maxpool";
    const size_t nx = (size_t)s.c * s.h * s.w;
    const size_t ny = (size_t)s.c * dahl_maxpool_out_h(&s) * dahl_maxpool_out_w(&s);
    float *x = random_floats(nx, true), *dy = random_floats(ny, false);
    float *y = malloc(ny * sizeof(float)), *dx = malloc(nx * sizeof(float));
    float *d_x = to_device(x, nx), *d_dy = to_device(dy, ny), *d_y = to_device(NULL, ny), *d_dx = to_device(NULL, nx);
    if (avg) {
        dahl_avgpool_forward(&s, x, y);
        check_ret(dahl_cuda_avgpool_forward(&s, d_x, d_y, stream), name);
    } else {
        dahl_maxpool_forward(&s, x, y);
        check_ret(dahl_cuda_maxpool_forward(&s, d_x, d_y, stream), name);
    }
    snprintf(what, sizeof(what), "%s forward %s", kind, name);
    compare(what, d_y, y, ny, 0.0);
    if (avg) {
        dahl_avgpool_backward(&s, dy, dx);
        check_ret(dahl_cuda_avgpool_backward(&s, d_dy, d_dx, stream), name);
    } else {
        dahl_maxpool_backward(&s, x, dy, dx);
        check_ret(dahl_cuda_maxpool_backward(&s, d_x, d_dy, d_dx, stream), name);
    }
    snprintf(what, sizeof(what), "%s backward %s", kind, name);
    compare(what, d_dx, dx, nx, 0.0);
    free(x), free(dy), free(y), free(dx);
    cudaFree(d_x), cudaFree(d_dy), cudaFree(d_y), cudaFree(d_dx);
}

static void test_relu(size_t n)
{
    float *x = random_floats(n, true), *dy = random_floats(n, false);
    float *y = malloc(n * sizeof(float)), *dx = malloc(n * sizeof(float));
    float *d_x = to_device(x, n), *d_dy = to_device(dy, n), *d_y = to_device(NULL, n), *d_dx = to_device(NULL, n);
    dahl_relu_forward(n, x, y);
    check_ret(dahl_cuda_relu_forward(n, d_x, d_y, stream), "relu forward");
    compare("relu forward", d_y, y, n, 0.0);
    dahl_relu_backward(n, y, dy, dx);
    check_ret(dahl_cuda_relu_backward(n, d_y, d_dy, d_dx, stream), "relu backward");
    compare("relu backward", d_dx, dx, n, 0.0);
    /* In place, as the CPU kernel allows. */
    check_ret(dahl_cuda_relu_forward(n, d_x, d_x, stream), "relu forward in place");
    compare("relu forward in place", d_x, y, n, 0.0);
    free(x), free(dy), free(y), free(dx);
    cudaFree(d_x), cudaFree(d_dy), cudaFree(d_y), cudaFree(d_dx);
}

/* add (bit for bit), dropout (the same hash: bit for bit) and batch norm (sums in another order: to rounding)
 * over n samples of c x hw. */
static void test_residual_layers(int n, int c, int hw)
{
    size_t all = (size_t)n * c * hw, per = (size_t)c * hw;
    float *x = random_floats(all, false), *x2 = random_floats(all, false), *dy = random_floats(all, false);
    float *y = malloc(all * sizeof(float)), *dx = malloc(all * sizeof(float)), *dx2 = malloc(all * sizeof(float));
    float *d_x = to_device(x, all), *d_x2 = to_device(x2, all), *d_dy = to_device(dy, all);
    float *d_y = to_device(NULL, all), *d_dx = to_device(NULL, all), *d_dx2 = to_device(NULL, all);
    dahl_add_forward(all, x, x2, y);
    check_ret(dahl_cuda_add_forward(all, d_x, d_x2, d_y, stream), "add forward");
    compare("add forward", d_y, y, all, 0.0);
    dahl_add_backward(all, dy, dx, dx2);
    check_ret(dahl_cuda_add_backward(all, d_dy, d_dx, d_dx2, stream), "add backward");
    compare("add backward (first)", d_dx, dx, all, 0.0);
    compare("add backward (second)", d_dx2, dx2, all, 0.0);
    uint64_t key = dahl_dropout_key(7, 3, 11);
    dahl_dropout_forward(all, x, y, key, 64, 40);
    check_ret(dahl_cuda_dropout(all, d_x, d_y, key, 64, 40, stream), "dropout");
    compare("dropout", d_y, y, all, 0.0);

    float *gamma = random_floats((size_t)c, false), *beta = random_floats((size_t)c, false);
    float *stats = calloc(2 * (size_t)c + 1, sizeof(float)), *dg = calloc((size_t)c, sizeof(float));
    float *db = calloc((size_t)c, sizeof(float)), *scratch = malloc(2 * (size_t)c * sizeof(float));
    float *run = malloc(2 * (size_t)c * sizeof(float));
    for (int i = 0; i < 2 * c; i++)
        run[i] = i < c ? 0.0f : 1.0f;
    float *d_stats = to_device(stats, 2 * (size_t)c + 1), *d_g = to_device(gamma, (size_t)c);
    float *d_b = to_device(beta, (size_t)c), *d_dg = to_device(dg, (size_t)c), *d_db = to_device(db, (size_t)c);
    float *d_run = to_device(run, 2 * (size_t)c);
    for (int k = 0; k < n; k++) {
        dahl_bn_stats(c, hw, x + k * per, stats);
        check_ret(dahl_cuda_bn_stats(c, hw, d_x + k * per, d_stats, stream), "bn stats");
    }
    compare("bn stats", d_stats, stats, 2 * (size_t)c + 1, 1e-5);
    dahl_bn_forward(c, hw, n, x, stats, gamma, beta, y, scratch);
    check_ret(dahl_cuda_bn_forward(c, hw, n, d_x, d_stats, d_g, d_b, d_y, 0, stream), "bn forward");
    compare("bn forward", d_y, y, all, 1e-4);
    for (int k = 0; k < n; k++) {
        dahl_bn_backward_params(c, hw, x + k * per, dy + k * per, stats, dg, db);
        check_ret(dahl_cuda_bn_backward_params(c, hw, d_x + k * per, d_dy + k * per, d_stats, d_dg, d_db, stream),
                  "bn backward params");
    }
    compare("bn dgamma", d_dg, dg, (size_t)c, 1e-4);
    compare("bn dbeta", d_db, db, (size_t)c, 1e-4);
    dahl_bn_backward_input(c, hw, n, x, dy, stats, gamma, dg, db, dx);
    check_ret(dahl_cuda_bn_backward_input(c, hw, n, d_x, d_dy, d_stats, d_g, d_dg, d_db, d_dx, stream),
              "bn backward input");
    compare("bn backward input", d_dx, dx, all, 1e-3);
    dahl_bn_running(c, stats, run);
    check_ret(dahl_cuda_bn_running(c, d_stats, d_run, stream), "bn running");
    compare("bn running", d_run, run, 2 * (size_t)c, 1e-5);
    dahl_bn_forward_eval(c, hw, n, x, run, gamma, beta, y, scratch);
    check_ret(dahl_cuda_bn_forward(c, hw, n, d_x, d_run, d_g, d_b, d_y, 1, stream), "bn forward eval");
    compare("bn forward eval", d_y, y, all, 1e-4);
    free(x), free(x2), free(dy), free(y), free(dx), free(dx2), free(gamma), free(beta), free(stats), free(dg);
    free(db), free(scratch), free(run);
    cudaFree(d_x), cudaFree(d_x2), cudaFree(d_dy), cudaFree(d_y), cudaFree(d_dx), cudaFree(d_dx2);
    cudaFree(d_stats), cudaFree(d_g), cudaFree(d_b), cudaFree(d_dg), cudaFree(d_db), cudaFree(d_run);
}

static void test_dense(int n_in, int n_out)
{
    char what[96];
    const size_t nw = (size_t)n_in * n_out;
    float *x = random_floats((size_t)n_in, false), *w = random_floats(nw, false), *b = random_floats((size_t)n_out, false);
    float *dy = random_floats((size_t)n_out, false), *dw = random_floats(nw, false);
    float *db = random_floats((size_t)n_out, false);
    float *y = malloc((size_t)n_out * sizeof(float)), *dx = malloc((size_t)n_in * sizeof(float));
    float *d_x = to_device(x, (size_t)n_in), *d_w = to_device(w, nw), *d_b = to_device(b, (size_t)n_out);
    float *d_dy = to_device(dy, (size_t)n_out), *d_dw = to_device(dw, nw), *d_db = to_device(db, (size_t)n_out);
    float *d_y = to_device(NULL, (size_t)n_out), *d_dx = to_device(NULL, (size_t)n_in);
    dahl_dense_forward(n_in, n_out, x, w, b, y);
    check_ret(dahl_cuda_dense_forward(n_in, n_out, d_x, d_w, d_b, d_y, stream, blas), "dense forward");
    snprintf(what, sizeof(what), "dense forward %dx%d", n_in, n_out);
    compare(what, d_y, y, (size_t)n_out, 1e-4);
    dahl_dense_backward_input(n_in, n_out, dy, w, dx);
    check_ret(dahl_cuda_dense_backward_input(n_in, n_out, d_dy, d_w, d_dx, stream, blas), "dense backward_input");
    snprintf(what, sizeof(what), "dense backward_input %dx%d", n_in, n_out);
    compare(what, d_dx, dx, (size_t)n_in, 1e-4);
    dahl_dense_backward_weights(n_in, n_out, x, dy, dw, db);
    check_ret(dahl_cuda_dense_backward_weights(n_in, n_out, d_x, d_dy, d_dw, d_db, stream, blas),
              "dense backward_weights");
    snprintf(what, sizeof(what), "dense backward_weights dw %dx%d", n_in, n_out);
    compare(what, d_dw, dw, nw, 1e-4);
    snprintf(what, sizeof(what), "dense backward_weights db %dx%d", n_in, n_out);
    compare(what, d_db, db, (size_t)n_out, 1e-4);
    free(x), free(w), free(b), free(dy), free(dw), free(db), free(y), free(dx);
    cudaFree(d_x), cudaFree(d_w), cudaFree(d_b), cudaFree(d_dy), cudaFree(d_dw), cudaFree(d_db), cudaFree(d_y);
    cudaFree(d_dx);
}

/* scale: logits multiplied by it (1000 checks the max shift); in_place: dlogits == logits. */
static void test_softmax_xent(int k, int label, float scale, bool in_place)
{
    char what[96];
    float *logits = random_floats((size_t)k, false);
    for (int i = 0; i < k; i++)
        logits[i] *= scale;
    float *dlogits = malloc((size_t)k * sizeof(float));
    float loss = 0.0f;
    int correct = 0;
    dahl_softmax_xent(k, logits, label, &loss, dlogits, &correct);
    float *d_logits = to_device(logits, (size_t)k);
    float *d_dlogits = in_place ? d_logits : to_device(NULL, (size_t)k);
    float *d_metrics = to_device(NULL, 2);
    check_ret(dahl_cuda_softmax_xent(k, d_logits, label, &d_metrics[0], d_dlogits, &d_metrics[1], stream),
              "softmax_xent");
    const float metrics[2] = {loss, (float)correct};
    snprintf(what, sizeof(what), "softmax_xent k=%d x%g%s dlogits", k, (double)scale, in_place ? " in place" : "");
    compare(what, d_dlogits, dlogits, (size_t)k, 1e-6);
    snprintf(what, sizeof(what), "softmax_xent k=%d x%g%s loss, correct", k, (double)scale,
             in_place ? " in place" : "");
    compare(what, d_metrics, metrics, 2, 1e-6);
    free(logits), free(dlogits);
    cudaFree(d_logits), cudaFree(d_metrics);
    if (!in_place)
        cudaFree(d_dlogits);
}

static void test_sgd(size_t n, bool momentum)
{
    float *p = random_floats(n, false), *g = random_floats(n, false), *v = random_floats(n, false);
    float *d_p = to_device(p, n), *d_g = to_device(g, n), *d_v = to_device(v, n);
    dahl_sgd_update(n, p, g, momentum ? v : NULL, 0.01f, momentum ? 0.9f : 0.0f);
    check_ret(dahl_cuda_sgd_update(n, d_p, d_g, momentum ? d_v : NULL, 0.01f, momentum ? 0.9f : 0.0f, stream), "sgd");
    compare(momentum ? "sgd momentum param" : "sgd param", d_p, p, n, 0.0);
    if (momentum)
        compare("sgd momentum velocity", d_v, v, n, 0.0);
    free(p), free(g), free(v);
    cudaFree(d_p), cudaFree(d_g), cudaFree(d_v);
}

static void test_reductions(size_t n)
{
    float *dst = random_floats(n, false), *src = random_floats(n, false);
    float *d_dst = to_device(dst, n), *d_src = to_device(src, n);
    dahl_accumulate(n, dst, src);
    check_ret(dahl_cuda_accumulate(n, d_dst, d_src, stream), "accumulate");
    compare("accumulate", d_dst, dst, n, 0.0);
    dahl_scale(n, dst, 1.0f / 3.0f);
    check_ret(dahl_cuda_scale(n, d_dst, 1.0f / 3.0f, stream), "scale");
    compare("scale", d_dst, dst, n, 0.0);
    dahl_zero(n, dst);
    check_ret(dahl_cuda_zero(n, d_dst, stream), "zero");
    compare("zero", d_dst, dst, n, 0.0);
    free(dst), free(src);
    cudaFree(d_dst), cudaFree(d_src);
}

/* Bad arguments: refused before anything is launched, with a message naming the kernel. */
static void test_refusals(void)
{
    const struct dahl_maxpool_shape bad = {.c = 1, .h = 2, .w = 2, .k = 3, .stride = 1};
    int ret = dahl_cuda_maxpool_forward(&bad, NULL, NULL, stream);
    bool ok = ret == -1 && strstr(dahl_cuda_error(), "maxpool forward") != NULL;
    ret = dahl_cuda_softmax_xent(10, NULL, 10, NULL, NULL, NULL, stream);
    ok = ok && ret == -1 && strstr(dahl_cuda_error(), "softmax_xent") != NULL;
    printf("%s refusals of invalid shapes and labels%s%s\n", ok ? "ok  " : "FAIL", ok ? "" : ": last error: ",
           ok ? "" : dahl_cuda_error());
    failures += !ok;
}

int main(void)
{
    int devices = 0;
    cudaError_t err = cudaGetDeviceCount(&devices);
    if (err != cudaSuccess || devices == 0) {
        printf("skipped: no CUDA device (%s)\n", err != cudaSuccess ? cudaGetErrorString(err) : "0 devices");
        return 77;
    }
    struct cudaDeviceProp prop;
    check_cuda(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    printf("device 0: %s (sm_%d%d)\n", prop.name, prop.major, prop.minor);
    check_cuda(cudaStreamCreate(&stream), "cudaStreamCreate");
    if (cublasCreate(&blas) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "test_cuda_kernels: cublasCreate failed\n");
        return 1;
    }
    dahl_kernels_init();

    /* LeNet's two convolutions (Fashion-MNIST), then stride, padding, rectangular kernels, and a 3x96x96
     * input whose im2col matrix needs several bands. */
    test_conv2d("lenet conv1 1x28x28 f6 k5 p2", (struct dahl_conv2d_shape){1, 28, 28, 6, 5, 5, 1, 2});
    test_conv2d("lenet conv2 6x14x14 f16 k5", (struct dahl_conv2d_shape){6, 14, 14, 16, 5, 5, 1, 0});
    test_conv2d("3x17x13 f5 k3x2 s2 p1", (struct dahl_conv2d_shape){3, 17, 13, 5, 3, 2, 2, 1});
    test_conv2d("3x96x96 f8 k5 (banded)", (struct dahl_conv2d_shape){3, 96, 96, 8, 5, 5, 1, 0});
    test_pool("6x28x28 k2 s2", (struct dahl_maxpool_shape){6, 28, 28, 2, 2, 0}, false);
    test_pool("3x11x9 k3 s2 (overlapping)", (struct dahl_maxpool_shape){3, 11, 9, 3, 2, 0}, false);
    test_pool("2x7x7 k2 s1 (overlapping)", (struct dahl_maxpool_shape){2, 7, 7, 2, 1, 0}, false);
    test_pool("64x16x16 k3 s2 pad 1 (ResNet's stem)", (struct dahl_maxpool_shape){64, 16, 16, 3, 2, 1}, false);
    test_pool("2x5x6 k2 s1 pad 1", (struct dahl_maxpool_shape){2, 5, 6, 2, 1, 1}, false);
    test_pool("3x11x9 k3 s2 (overlapping)", (struct dahl_maxpool_shape){3, 11, 9, 3, 2, 0}, true);
    test_pool("64x8x8 global", (struct dahl_maxpool_shape){64, 8, 8, 8, 8, 0}, true);
    test_relu(4704);
    test_relu(1000003);
    test_residual_layers(3, 16, 32 * 32);
    test_residual_layers(2, 64, 8 * 8);
    test_dense(400, 120);
    test_dense(84, 10);
    test_dense(3, 1);
    test_softmax_xent(10, 3, 1.0f, false);
    test_softmax_xent(10, 7, 1000.0f, false);
    test_softmax_xent(10, 0, 5.0f, true);
    test_softmax_xent(1000, 999, 3.0f, false);
    test_sgd(48120, false);
    test_sgd(48120, true);
    test_reductions(2400);
    test_reductions(1000003);
    test_refusals();

    cublasDestroy(blas);
    cudaStreamDestroy(stream);
    printf("%s: %d check(s) failed\n", failures ? "FAILED" : "passed", failures);
    return failures ? 1 : 0;
}
