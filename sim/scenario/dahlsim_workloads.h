/* Scenario keys of several jobs sharing one machine (issue 20): "workloads", "job_count", "job_order",
 * "job_contexts", "job_window", "job_sequence", "ga", read into the experiment (dahlsim_experiment.h) and
 * checked against the GPU memory limit.
 *
 *   workloads     [{"name", "model", "dataset", "batch", "samples" | "iterations", "start_s", "priority"}],
 *                 1 to 8 jobs; a key left out takes the scenario's own (model, dataset, batch, samples), name
 *                 "jobN", start_s 0, priority 0 (higher first where the order has a choice: round-robin's
 *                 cycle, fifo's and weight's ties). Models: lenet, deep, deep:N.
 *   job_count     integer in [1, the number of workloads], default all: only the first N jobs run (so that a
 *                 sweep can vary the number of jobs sharing the machine)
 *   job_order     "round-robin" (default), "fifo", "weight", "ga" or "given"
 *   job_contexts  "shared" (default: one StarPU scheduling context for every job) or "per-job" (one context
 *                 each, over the same workers, its own instance of the scheduler)
 *   job_window    integer >= 1, default 4: the weight heuristic's window, in steps of each job
 *   job_sequence  given: the job of every job-step, by name or index, e.g. ["a", "b", "a", "b"] (each job as
 *                 many times as it has steps), or a file holding such a list ({"sequence": [...]}, as
 *                 `dahlsim dag share --order ga` writes it), relative to the scenario's directory
 *   ga            job_order ga: {"population" (>= 2, 32), "select" (population / 4), "generations" (50),
 *                 "patience" (10), "mutation" (0.2), "seed" (1)}: the lab's genetic search over the orders
 *                 (dahlsim_share.h), emulated with StarPU's eviction on the machine's perf models and PCIe
 *                 link; its best order is the sequence the program runs
 *
 * StarPU-free, front end only. */
#ifndef DAHLSIM_WORKLOADS_H
#define DAHLSIM_WORKLOADS_H

#include "dahlsim_experiment.h"

#include <cjson/cJSON.h>
#include <stdbool.h>

/* Reads the keys above from scenario object o (file path; point: "" or the sweep point's label, for
 * messages) into x, whose single-job keys are already read. Absent "workloads": nothing to do (the job
 * keys are then refused). Returns false after printing a one-line error naming the file and the field. */
bool dahlsim_workloads_from(const char *path, const char *point, const char *scenario_dir, const cJSON *o,
                            struct dahlsim_experiment *x);

struct dahlsim_share;
/* The jobs of x as the lab's GPU-sharing emulator sees them (dahlsim_share.h): per job one step's GPU time
 * from the calibration's perf models and its tensors, the machine's PCIe link, x's GPU memory limit (none:
 * the jobs' summed data). Returns 0, or a negative errno with the reason in err. */
int dahlsim_workloads_share(const struct dahlsim_experiment *x, struct dahlsim_share *s, char *err, size_t err_size);

#endif /* DAHLSIM_WORKLOADS_H */
