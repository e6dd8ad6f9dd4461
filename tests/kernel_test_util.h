/* Helpers of the kernel tests (test_kernels.c, test_layer_kernels.c): a deterministic random source, double
 * copies, and comparisons of a float kernel against a double reference. */
#ifndef KERNEL_TEST_UTIL_H
#define KERNEL_TEST_UTIL_H

#include <criterion/criterion.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

/* Relative tolerance of a float kernel against a double reference; absolute floor for values near 0. */
#define REL_TOL 1e-4
#define ABS_TOL 1e-5
/* Central difference step; the references are linear or piecewise linear in what is perturbed. */
#define FD_EPS 1e-3

/* ---- helpers ------------------------------------------------------------------------------------------- */

static uint64_t rng_state;

static inline void rng_seed(uint64_t seed)
{
    rng_state = seed;
}

/* Uniform in [-1, 1), deterministic across runs and machines. */
static inline float rng_uniform(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (float)((double)(rng_state >> 40) / (double)(1ULL << 24) * 2.0 - 1.0);
}

static inline float *random_floats(size_t n)
{
    float *v = malloc(n * sizeof(float));
    cr_assert_not_null(v);
    for (size_t i = 0; i < n; i++) {
        v[i] = rng_uniform();
    }
    return v;
}

static inline double *to_double(const float *v, size_t n)
{
    double *d = malloc(n * sizeof(double));
    cr_assert_not_null(d);
    for (size_t i = 0; i < n; i++) {
        d[i] = v[i];
    }
    return d;
}

static inline void *alloc_or_fail(size_t bytes)
{
    void *p = malloc(bytes > 0 ? bytes : 1);
    cr_assert_not_null(p);
    return p;
}

static inline void expect_close(const char *what, size_t i, double got, double want)
{
    const double tol = ABS_TOL + REL_TOL * fabs(want);
    cr_expect_leq(fabs(got - want), tol, "%s[%zu]: got %.9g, want %.9g (tolerance %.3g)", what, i, got, want,
                  tol);
}

static inline void expect_all_close(const char *what, const float *got, const double *want, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        expect_close(what, i, got[i], want[i]);
    }
}

static inline double dot(const double *a, const double *b, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++) {
        s += a[i] * b[i];
    }
    return s;
}

#endif /* KERNEL_TEST_UTIL_H */
