/* Which perf models a simulation reads: a calibration measures its kernels with every core a worker
 * (sampling/) and, on a machine of several cores, again with one CPU worker (DAHLSIM_ONE_WORKER_SAMPLING,
 * dahlsim_modeltable.h). A run with fewer CPU workers than that reads the one-worker models, or between the
 * two a blend of them, linear in the worker count (a model: only the two ends are measured; the history
 * entries are blended, the regression fits stay the one-worker set's). */
#ifndef DAHLSIM_KERNELS_H
#define DAHLSIM_KERNELS_H

#include "dahlsim_experiment.h"

#include <stddef.h>

/* The perf-model directory x's simulation reads, into dir: x->machine_dir/sampling; x->machine_dir's
 * one-worker models when x has one CPU worker and its calibration measured them (its manifest's
 * "one_worker": {"sampling", "all_cpus"}) for more; or, from 2 to all_cpus - 1 workers, those blended with
 * sampling/'s into work_dir (created anew; the caller removes it). Node groups and runs with GPUs read
 * sampling/. what gets how it chose ("" for sampling/), for results.json's kernel_models. Returns 0, or
 * with the reason in err: -EINVAL (the manifest's record is not whole: the file and the field) or -EIO (the
 * blend could not be written). */
int dahlsim_kernel_models(const struct dahlsim_experiment *x, const char *work_dir, char *dir, size_t dir_size,
                          char *what, size_t what_size, char *err, size_t err_size);

#endif /* DAHLSIM_KERNELS_H */
