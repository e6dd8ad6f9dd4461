/* What the kernel benchmarks share: a monotonic clock, the timing of a call repeated for MIN_SECONDS,
 * deterministic random inputs, and the --help handling. */
#ifndef DAHL_BENCH_UTIL_H
#define DAHL_BENCH_UTIL_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Each measurement repeats its call until this much time has passed, after one warm-up call. */
#define MIN_SECONDS 1.0

static inline double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Seconds per call of call(ctx): one warm-up call, then calls repeated until MIN_SECONDS have passed. */
static inline double bench_seconds_per_call(void (*call)(void *ctx), void *ctx)
{
    call(ctx);
    long calls = 0;
    const double start = now_s();
    double elapsed;
    do {
        call(ctx);
        calls++;
        elapsed = now_s() - start;
    } while (elapsed < MIN_SECONDS);
    return elapsed / (double)calls;
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

/* The benchmarks take no argument but --help: -1 to go on when there is none; otherwise usage printed (to
 * stdout for --help, to stderr for anything else) and the exit code, 0 or 2. */
static inline int bench_args(int argc, char **argv, const char *usage)
{
    if (argc <= 1)
        return -1;
    const bool help = strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0;
    fputs(usage, help ? stdout : stderr);
    return help ? 0 : 2;
}

#endif /* DAHL_BENCH_UTIL_H */
