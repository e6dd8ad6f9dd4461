/* How fast and how quiet this machine is right now, and whether it is the machine a calibration measured
 * (issue 23). The probe has two parts:
 * - dahl's own conv2d forward kernel (one 3x28x28 sample, 6 filters 5x5: LeNet's first layer on 28x28x3)
 *   repeated on each core at once, each thread pinned to its core: a loaded core shows as a slower probe;
 * - a cache line passed from core 0 to each other core and back (two pinned threads, one atomic): the round
 *   trip. The runtime's own work (queues, locks, the submitting thread handing tasks to the workers) is that
 *   traffic, and the kernel probe does not see it: on a 2-vCPU VM whose hypervisor placed the two vCPUs
 *   apart, the round trip went from 100-180 ns to 480-590 ns for minutes at a time, and with it StarPU's cost
 *   per task from 1.8 to 4.3-6.8 us (submission) and 3.0 to 5.5-7.6 us (a worker's), while the kernel probe
 *   read the same (docs/fidelity.md).
 * StarPU-free, front end only. */
#ifndef DAHLSIM_PROBE_H
#define DAHLSIM_PROBE_H

#include <stdbool.h>
#include <stddef.h>

#define DAHLSIM_PROBE_MAX_CORES 256
#define DAHLSIM_PROBE_S 0.03        /* seconds measured per core and probe */
#define DAHLSIM_PROBE_WARMUP_S 0.05 /* run first, unmeasured: under 5 % of a 1-3 s validation run, twice */

/* A run's probe of n cores: the kernel's speed on each, and the cores' round trip. */
struct dahlsim_probe {
    double gflops[DAHLSIM_PROBE_MAX_CORES];
    double latency_ns; /* the median over the pairs (0, c), c < n, of their round trip; 0: one core, or none */
};

/* A run is noisy when its kernel probe is more than X slower than the session's fastest on a core (validate
 * and calibrate --noisy X), or its round trip more than DAHLSIM_PROBE_LATENCY_SLACK / (1 - X) times the
 * session's shortest: the round trip of one placement of the cores spreads by up to 1.8 times (100-183 ns,
 * measured on the 2-vCPU VM), where the kernel's speed spreads by a few %. */
#define DAHLSIM_PROBE_LATENCY_SLACK 2.0

/* GFLOP/s of the probe on cores 0..n-1 at once (one pinned thread each, about seconds long) into gflops[n].
 * Returns 0, or a negative errno (no thread, or core not allowed to this process). */
int dahlsim_probe_cores(int n, double seconds, double *gflops);

/* The round trip of a cache line between core 0 and each of cores 1..n-1 (the median of a few bursts per pair,
 * so that one preemption does not count), their median into *ns (0 for one core). Returns 0, or a negative
 * errno (no thread, or core not allowed to this process). */
int dahlsim_probe_latency(int n, double *ns);

/* Around a run: probes cores 0..n-1 and keeps in slowest the worse of this probe and what it holds (0: none
 * yet) per core and for the round trip, so that a probe before and one after the run leave the worse of the
 * two; raises best (the session's fastest; NULL: none kept) to this probe where better. Returns 0 or a
 * negative errno. */
int dahlsim_probe_around(int n, struct dahlsim_probe *slowest, struct dahlsim_probe *best);
/* Raises best (the session's fastest kernel per core, c in 0..n-1, and shortest round trip) to probe where
 * better. */
void dahlsim_probe_raise(int n, const struct dahlsim_probe *probe, struct dahlsim_probe *best);
/* How much slower than best the slowest of a run's kernel probes was over its cores (0: as fast). */
double dahlsim_probe_slowness(int n, const struct dahlsim_probe *probe, const struct dahlsim_probe *best);
/* The run's round trip over the session's shortest (1 where either is unknown). */
double dahlsim_probe_latency_ratio(const struct dahlsim_probe *probe, const struct dahlsim_probe *best);
/* The round-trip ratio above which a run is noisy at threshold X (see DAHLSIM_PROBE_LATENCY_SLACK). */
double dahlsim_probe_latency_limit(double threshold);
/* Whether a run that probed slowness below the fastest and latency_ratio times the shortest round trip is
 * noisy at threshold X: the criterion itself, for runs judged again from a report. */
bool dahlsim_probe_noisy_at(double slowness, double latency_ratio, double threshold);
/* Whether the run is noisy at threshold X (its kernel probe or its round trip; see above). */
bool dahlsim_probe_noisy(int n, const struct dahlsim_probe *probe, const struct dahlsim_probe *best,
                         double threshold);

/* What identifies a machine for its calibration: manifest.json's "node". */
struct dahlsim_node {
    char cpu_model[256];
    long cores;
    double memory_bytes;
    double probe_gflops;    /* the probe's median over the cores when measured; 0: not recorded */
    double core_latency_ns; /* the cores' round trip when measured (the shortest of three); 0: not recorded */
};

/* This machine: /proc/cpuinfo's first "model name", online cores, physical memory; with probe, the probe's
 * median GFLOP/s over every core and the cores' round trip (best of three runs), else 0. */
void dahlsim_node_here(struct dahlsim_node *n, bool probe);

/* Reads manifest_path's "node" into n. Returns 0, or -ENOENT / -EINVAL with the reason in err. */
int dahlsim_node_of_manifest(const char *manifest_path, struct dahlsim_node *n, char *err, size_t err_size);

/* Whether here is the machine calibrated: the same CPU model and core count, memory within 10 %. When not,
 * why (the first difference, "FIELD: calibrated X, here Y") in why. */
bool dahlsim_node_matches(const struct dahlsim_node *calibrated, const struct dahlsim_node *here, char *why,
                          size_t why_size);
/* Whether the probe (where both have one) differs by more than 15 %, and by how much in why: a warning, not a
 * refusal, since a loaded machine probes slower (the same machine under the test suite's load measured
 * outside that band). */
bool dahlsim_node_probe_differs(const struct dahlsim_node *calibrated, const struct dahlsim_node *here, char *why,
                                size_t why_size);

/* Whether the cores' round trip (where both have one) differs by more than DAHLSIM_PROBE_LATENCY_SLACK times
 * either way, and by how much in why: a warning, as above (the same VM places its vCPUs apart for minutes). */
bool dahlsim_node_latency_differs(const struct dahlsim_node *calibrated, const struct dahlsim_node *here, char *why,
                                  size_t why_size);

#endif /* DAHLSIM_PROBE_H */
