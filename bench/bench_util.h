/* What the kernel benchmarks share: a monotonic clock, deterministic random inputs, and how long a
 * measurement repeats its call. */
#ifndef DAHL_BENCH_UTIL_H
#define DAHL_BENCH_UTIL_H

#include <stdlib.h>
#include <time.h>

/* Each measurement repeats its call until this much time has passed, after one warm-up call. */
#define MIN_SECONDS 1.0

static inline double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* n floats in [-0.5, 0.5), the same every run; NULL when memory runs out. */
static inline float *random_floats(size_t n)
{
    float *v = malloc(n * sizeof(float));
    if (v == NULL) {
        return NULL;
    }
    unsigned s = 12345;
    for (size_t i = 0; i < n; i++) {
        s = s * 1103515245u + 12345u;
        v[i] = (float)((s >> 8) & 0xffff) / 65536.0f - 0.5f;
    }
    return v;
}

#endif /* DAHL_BENCH_UTIL_H */
