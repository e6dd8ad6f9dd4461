/* How fast the GPU-sharing emulator (sim/lab/dahlsim_share.h) is: full emulations per second of 4 and 8
 * LeNet jobs x 16 steps (exported from the roofline-14cpu-1v100 calibration, 28x28 and 128x128x3 images
 * alternately, memory half their data), per policy, and the genetic search's evaluations per second. The GA
 * needs thousands per second to be practical. Measures, checks nothing.
 * usage: share_emulator [SECONDS_PER_POINT] (default 1) */
#include "dahlsim_share.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef DAHLSIM_SOURCE_DIR
#define DAHLSIM_SOURCE_DIR "."
#endif

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int make_jobs(int njobs, struct dahlsim_share *s)
{
    char err[1024];
    struct dahlsim_share_export_conf conf = {.machine_dir = DAHLSIM_SOURCE_DIR "/calibration/roofline-14cpu-1v100",
                                             .machine = "roofline-14cpu-1v100", .momentum = true, .perfmodel = 0};
    memset(s, 0, sizeof(*s));
    uint64_t sum = 0, largest = 0;
    for (int j = 0; j < njobs; j++) {
        char name[32];
        snprintf(name, sizeof(name), "job%d", j);
        bool big = j % 2 == 1;
        struct dahlsim_share_export_job job = {.name = name, .model = "lenet", .c = big ? 3 : 1, .h = big ? 128 : 28,
                                               .w = big ? 128 : 28, .batch = 32, .steps = 16};
        if (dahlsim_share_export_job(&conf, &job, s, err, sizeof(err)) != 0) {
            fprintf(stderr, "share_emulator: %s\n", err);
            return 1;
        }
        uint64_t b = dahlsim_share_job_bytes(&s->jobs[j]);
        sum += b;
        largest = b > largest ? b : largest;
    }
    s->memory_bytes = sum / 2 > largest ? sum / 2 : largest;
    s->bandwidth_bytes_per_s = 12e9;
    s->latency_s = 10e-6;
    return 0;
}

static void bench_runs(const struct dahlsim_share *s, double seconds)
{
    int n = 0;
    for (int j = 0; j < s->njobs; j++)
        n += s->jobs[j].steps;
    int *order = malloc((size_t)n * sizeof(int));
    for (int j = 0, p = 0; j < s->njobs; j++)
        for (int k = 0; k < s->jobs[j].steps; k++)
            order[p++] = j;
    uint64_t rng = 1;
    for (int p = 0; p < DAHLSIM_SHARE_NPOLICIES; p++) {
        struct dahlsim_share_conf conf = {.policy = p, .prefetch = true, .window = 4};
        long runs = 0;
        double t0 = now_s(), t;
        while ((t = now_s()) - t0 < seconds) {
            for (int i = n - 1; i > 0; i--) { /* a new random order per run */
                rng = rng * 6364136223846793005ull + 1442695040888963407ull;
                int k = (int)((rng >> 33) % (uint64_t)(i + 1)), x = order[i];
                order[i] = order[k];
                order[k] = x;
            }
            struct dahlsim_share_result r;
            char err[256];
            if (dahlsim_share_run(s, &conf, DAHLSIM_SHARE_GIVEN, order, n, &r, err, sizeof(err)) != 0) {
                fprintf(stderr, "share_emulator: %s\n", err);
                exit(1);
            }
            dahlsim_share_result_fini(&r);
            runs++;
        }
        printf("| %d jobs x 16 steps | %s | dahlsim_share_run, given orders | %.0f |\n", s->njobs,
               dahlsim_share_policy_name(p), (double)runs / (t - t0));
    }
    free(order);
}

static void bench_ga(const struct dahlsim_share *s)
{
    for (int p = 0; p < DAHLSIM_SHARE_NPOLICIES; p++) {
        struct dahlsim_share_conf conf = {.policy = p, .prefetch = true, .window = 4};
        struct dahlsim_share_ga_conf ga;
        dahlsim_share_ga_defaults(&ga);
        ga.patience = ga.generations; /* all 50 generations */
        struct dahlsim_share_result best;
        struct dahlsim_share_ga_stats stats;
        char err[256];
        double t0 = now_s();
        if (dahlsim_share_ga(s, &conf, &ga, &best, &stats, err, sizeof(err)) != 0) {
            fprintf(stderr, "share_emulator: %s\n", err);
            exit(1);
        }
        double t = now_s() - t0;
        printf("| %d jobs x 16 steps | %s | GA (32 x 50 generations, %ld evaluations, %.3f s) | %.0f |\n", s->njobs,
               dahlsim_share_policy_name(p), stats.evaluations, t, (double)stats.evaluations / t);
        dahlsim_share_result_fini(&best);
    }
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 1.0;
    if (!(seconds > 0.0)) {
        fprintf(stderr, "usage: share_emulator [SECONDS_PER_POINT]\n");
        return 2;
    }
    printf("| jobs | policy | what | emulations/s |\n|---|---|---|---|\n");
    for (int njobs = 4; njobs <= 8; njobs += 4) {
        struct dahlsim_share s;
        if (make_jobs(njobs, &s) != 0)
            return 1;
        bench_runs(&s, seconds);
        bench_ga(&s);
        dahlsim_share_fini(&s);
    }
    return 0;
}
