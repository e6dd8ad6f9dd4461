/* The machine probe that validate and calibrate put around their native runs (dahlsim_probe.h): when a run is
 * noisy (its kernel probe slower than the session's fastest, or its cores' round trip longer than the
 * shortest), the round trip measured on this machine, and the warning when the cores are not as close as
 * when the calibration was measured. */
#include <criterion/criterion.h>

#include "dahlsim_probe.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

/* A probe of two cores: both kernels at gflops, the round trip latency_ns. */
static struct dahlsim_probe probe2(double gflops, double latency_ns)
{
    struct dahlsim_probe p = {.latency_ns = latency_ns};
    p.gflops[0] = p.gflops[1] = gflops;
    return p;
}

Test(probe, a_run_is_noisy_when_its_kernel_is_slow_or_its_cores_far_apart)
{
    struct dahlsim_probe best = probe2(100, 100);
    /* --noisy 0.05: the kernel within 5 % of the fastest, the round trip within 2 / 0.95 = 2.1 times */
    cr_assert_float_eq(dahlsim_probe_latency_limit(0.05), 2.0 / 0.95, 1e-12);
    struct dahlsim_probe quiet = probe2(96, 180); /* two placements of close cores: 100 and 180 ns */
    cr_assert_not(dahlsim_probe_noisy(2, &quiet, &best, 0.05));
    struct dahlsim_probe slow = probe2(90, 100);
    cr_assert_float_eq(dahlsim_probe_slowness(2, &slow, &best), 0.10, 1e-12);
    cr_assert(dahlsim_probe_noisy(2, &slow, &best, 0.05));
    cr_assert_not(dahlsim_probe_noisy(2, &slow, &best, 0.15));
    struct dahlsim_probe apart = probe2(100, 490); /* the cores placed apart: 480-590 ns measured */
    cr_assert_float_eq(dahlsim_probe_latency_ratio(&apart, &best), 4.9, 1e-12);
    cr_assert(dahlsim_probe_noisy(2, &apart, &best, 0.05));
    cr_assert(dahlsim_probe_noisy(2, &apart, &best, 0.15), "a threshold for the kernel's noise forgives no placement");
    cr_assert_not(dahlsim_probe_noisy(2, &apart, &best, 0.99), "--noisy 0.99 (the tests') judges nothing noisy");
    /* one core: no round trip, judged on the kernel alone */
    struct dahlsim_probe one = {.gflops = {100}}, one_best = {.gflops = {100}};
    cr_assert_float_eq(dahlsim_probe_latency_ratio(&one, &one_best), 1.0, 1e-12);
    cr_assert_not(dahlsim_probe_noisy(1, &one, &one_best, 0.05));
}

/* Around a run, the worse of the two probes stays; the session's best takes the better of everything seen. */
Test(probe, around_a_run_the_worse_probe_stays_and_the_best_is_raised)
{
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int n = online >= 2 ? 2 : 1;
    struct dahlsim_probe run = {0}, best = {0};
    cr_assert_eq(dahlsim_probe_around(n, &run, &best), 0);
    cr_assert_eq(dahlsim_probe_around(n, &run, &best), 0);
    for (int c = 0; c < n; c++) {
        cr_assert(run.gflops[c] > 0 && run.gflops[c] <= best.gflops[c], "core %d: run %g, best %g", c,
                  run.gflops[c], best.gflops[c]);
    }
    if (n == 1) {
        cr_assert_eq(run.latency_ns, 0, "one core has no round trip");
        return;
    }
    /* a round trip on any machine: more than a nanosecond, less than the millisecond of a lost timeslice */
    cr_assert(best.latency_ns > 1 && best.latency_ns <= run.latency_ns && run.latency_ns < 1e6, "best %g, run %g",
              best.latency_ns, run.latency_ns);
}

Test(probe, one_core_has_no_round_trip_and_bad_counts_are_refused)
{
    double ns = -1;
    cr_assert_eq(dahlsim_probe_latency(1, &ns), 0);
    cr_assert_eq(ns, 0);
    cr_assert_eq(dahlsim_probe_latency(0, &ns), -EINVAL);
    cr_assert_eq(dahlsim_probe_latency(DAHLSIM_PROBE_MAX_CORES + 1, &ns), -EINVAL);
}

Test(probe, a_calibration_with_the_cores_closer_or_farther_is_named)
{
    struct dahlsim_node calibrated = {.core_latency_ns = 180}, here = {.core_latency_ns = 100};
    char why[512] = "";
    cr_assert_not(dahlsim_node_latency_differs(&calibrated, &here, why, sizeof(why)), "%s", why);
    here.core_latency_ns = 490;
    cr_assert(dahlsim_node_latency_differs(&calibrated, &here, why, sizeof(why)));
    cr_assert(strstr(why, "490 ns between the cores and back here, 180 ns when it was calibrated") != NULL, "%s", why);
    calibrated.core_latency_ns = 1000; /* and the other way round */
    here.core_latency_ns = 100;
    cr_assert(dahlsim_node_latency_differs(&calibrated, &here, why, sizeof(why)));
    calibrated.core_latency_ns = 0; /* calibrated before the round trip was probed: nothing to compare */
    cr_assert_not(dahlsim_node_latency_differs(&calibrated, &here, why, sizeof(why)));
}
