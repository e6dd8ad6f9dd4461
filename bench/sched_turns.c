/* sched_turns: how the kernel shares cores between more spinning threads than cores, natively. StarPU-MPI's
 * progression thread and a rank's workers all poll (docs/multinode.md#the-progression-thread): on a node
 * whose workers hold every core, ncores + 1 threads never sleep. The simulation time-slices them by a
 * model (runtime/dahl_progress.c); this measures what the machine's kernel does instead.
 *
 * Each of THREADS threads (default: the online CPUs + 1) spins for SECONDS (default 4) reading the
 * monotonic clock; a gap of more than 0.5 ms between two readings is a wait (another thread held its core).
 * Printed, in one run: each thread's waits and the runs between them (median, 10th and 90th percentiles, ms);
 * the time from one thread's wait to the next one's (the tick, where the kernel turns at its tick); how the waits
 * follow each other, in order of their start: the share where the thread waiting is the one that waited two
 * waits before (two threads taking turns on one core, the others alone on theirs), the share where it is the
 * one that waited THREADS - 1 waits before and no other in between (a rotation of every thread through the
 * cores), and the stretches during which the same two threads took turns (median, 10th and 90th percentiles,
 * ms). One run on an idle machine; run it several times: the kernel's load balancing moves.
 *
 * usage: build/bench/sched_turns [THREADS [SECONDS]] */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 64
#define MAX_WAITS 20000
#define GAP_S 0.0005

struct spinner {
    int id;
    size_t n;
    double start_s[MAX_WAITS], end_s[MAX_WAITS]; /* each wait, from the run's start */
};

struct wait {
    double start_s;
    int id;
};

static double t0_s, duration_s;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void *spin(void *arg)
{
    struct spinner *s = arg;
    double last = now_s();
    for (;;) {
        double t = now_s();
        if (t - t0_s > duration_s)
            break;
        if (t - last > GAP_S && s->n < MAX_WAITS) {
            s->start_s[s->n] = last - t0_s;
            s->end_s[s->n] = t - t0_s;
            s->n++;
        }
        last = t;
    }
    return NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cmp_wait(const void *a, const void *b)
{
    return cmp_double(&((const struct wait *)a)->start_s, &((const struct wait *)b)->start_s);
}

/* v sorted in place; its q-quantile (nearest rank), 0 if empty. */
static double quantile(double *v, size_t n, double q)
{
    if (n == 0)
        return 0.0;
    qsort(v, n, sizeof(*v), cmp_double);
    size_t i = (size_t)(q * (double)(n - 1) + 0.5);
    return v[i];
}

static void print_spread(const char *what, double *v, size_t n)
{
    printf("  %-26s %8.2f %8.2f %8.2f  (%zu)\n", what, quantile(v, n, 0.5) * 1e3, quantile(v, n, 0.1) * 1e3,
           quantile(v, n, 0.9) * 1e3, n);
}

static int parse(const char *text, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno != 0 || end == text || *end != '\0' || !(v >= lo && v <= hi))
        return -1;
    *out = v;
    return 0;
}

int main(int argc, char **argv)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    double threads_d = (double)(cpus > 0 ? cpus + 1 : 3);
    duration_s = 4.0;
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf("usage: sched_turns [THREADS [SECONDS]]  (default: online CPUs + 1, 4 s)\n");
        return 0;
    }
    if (argc > 3 || (argc > 1 && parse(argv[1], 2, MAX_THREADS, &threads_d) != 0) ||
        (argc > 2 && parse(argv[2], 0.1, 600, &duration_s) != 0)) {
        fprintf(stderr, "sched_turns: error: expected [THREADS (2-%d) [SECONDS (0.1-600)]]\n", MAX_THREADS);
        return 2;
    }
    int nthreads = (int)threads_d;
    struct spinner *s = calloc((size_t)nthreads, sizeof(*s));
    struct wait *all = calloc((size_t)nthreads * MAX_WAITS, sizeof(*all));
    double *v = calloc((size_t)nthreads * MAX_WAITS, sizeof(*v));
    pthread_t tid[MAX_THREADS];
    if (s == NULL || all == NULL || v == NULL) {
        fprintf(stderr, "sched_turns: error: out of memory\n");
        return 1;
    }
    t0_s = now_s();
    for (int i = 0; i < nthreads; i++) {
        s[i].id = i;
        if (pthread_create(&tid[i], NULL, spin, &s[i]) != 0) {
            fprintf(stderr, "sched_turns: error: cannot start thread %d\n", i);
            return 1;
        }
    }
    for (int i = 0; i < nthreads; i++)
        pthread_join(tid[i], NULL);

    printf("%d spinning threads on %ld online CPUs for %.1f s\n", nthreads, cpus, duration_s);
    printf("  %-26s %8s %8s %8s\n", "(ms)", "median", "p10", "p90");
    size_t nall = 0, nv = 0, nruns = 0;
    for (int i = 0; i < nthreads; i++)
        for (size_t k = 0; k < s[i].n; k++) {
            all[nall++] = (struct wait){.start_s = s[i].start_s[k], .id = i};
            v[nv++] = s[i].end_s[k] - s[i].start_s[k];
        }
    double tick_s = quantile(v, nv, 0.5);
    print_spread("waits", v, nv);
    for (int i = 0; i < nthreads; i++)
        for (size_t k = 0; k + 1 < s[i].n; k++)
            v[nruns++] = s[i].start_s[k + 1] - s[i].end_s[k];
    print_spread("runs between waits", v, nruns);
    if (nall < 3 || tick_s <= 0) {
        printf("  too few waits to say more (fewer threads than CPUs, or the run too short)\n");
        return 0;
    }
    qsort(all, nall, sizeof(*all), cmp_wait);
    for (size_t k = 1; k < nall; k++)
        v[k - 1] = all[k].start_s - all[k - 1].start_s;
    print_spread("from a wait to the next", v, nall - 1);
    size_t pairs = 0, rotations = 0, nstretch = 0;
    double stretch_start = all[0].start_s;
    for (size_t k = 2; k < nall; k++) {
        bool pair = all[k].id == all[k - 2].id && all[k].id != all[k - 1].id;
        pairs += pair;
        size_t back = (size_t)nthreads; /* in a rotation each thread waits once in nthreads waits */
        if (k >= back) {
            bool rot = all[k].id == all[k - back].id;
            for (size_t j = 1; j < back && rot; j++)
                rot = all[k - j].id != all[k].id;
            rotations += rot && back > 2;
        }
        if (!pair || k + 1 == nall) {
            if (all[k - 1].start_s - stretch_start > 0)
                v[nstretch++] = all[k - 1].start_s - stretch_start;
            stretch_start = all[k - 1].start_s;
        }
    }
    printf("  waits after the same thread two waits before: %.0f %%; a rotation through all threads: %.0f %%\n",
           100.0 * (double)pairs / (double)(nall - 2), 100.0 * (double)rotations / (double)(nall - 2));
    print_spread("stretches of one pair", v, nstretch);
    free(s);
    free(all);
    free(v);
    return 0;
}
