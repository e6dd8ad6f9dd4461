/* How fast and how quiet this machine is right now, and whether it is the machine a calibration measured
 * (issue 23). The probe is dahl's own conv2d forward kernel (one 3x28x28 sample, 6 filters 5x5: LeNet's first
 * layer on 28x28x3) repeated on each core at once, each thread pinned to its core: a loaded core shows as a
 * slower probe. StarPU-free, front end only. */
#ifndef DAHLSIM_PROBE_H
#define DAHLSIM_PROBE_H

#include <stdbool.h>
#include <stddef.h>

#define DAHLSIM_PROBE_MAX_CORES 256
#define DAHLSIM_PROBE_S 0.03        /* seconds measured per core and probe */
#define DAHLSIM_PROBE_WARMUP_S 0.05 /* run first, unmeasured: under 5 % of a 1-3 s validation run, twice */

/* GFLOP/s of the probe on cores 0..n-1 at once (one pinned thread each, about seconds long) into gflops[n].
 * Returns 0, or a negative errno (no thread, or core not allowed to this process). */
int dahlsim_probe_cores(int n, double seconds, double *gflops);

/* Around a run: probes cores 0..n-1 and keeps in slowest[c] the slower of this probe and what it holds (0:
 * none yet), so that a probe before and one after the run leave the worse of the two; raises best[c] (the
 * session's fastest; NULL: none kept) to this probe where faster. Returns 0 or a negative errno. */
int dahlsim_probe_around(int n, double *slowest, double *best);
/* Raises best[c] (the session's fastest per core) to probe[c] where faster, c in 0..n-1. */
void dahlsim_probe_raise(int n, const double *probe, double *best);
/* How much slower than best the slowest of a run's probes was over its cores (0: as fast): a run is noisy
 * when this exceeds the threshold (validate and calibrate --noisy). */
double dahlsim_probe_slowness(int n, const double *probe, const double *best);

/* What identifies a machine for its calibration: manifest.json's "node". */
struct dahlsim_node {
    char cpu_model[256];
    long cores;
    double memory_bytes;
    double probe_gflops; /* the probe's median over the cores when measured; 0: not recorded */
};

/* This machine: /proc/cpuinfo's first "model name", online cores, physical memory; with probe, the probe's
 * median GFLOP/s over every core (best of three runs), else 0. */
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

#endif /* DAHLSIM_PROBE_H */
