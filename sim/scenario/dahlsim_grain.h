/* "grain": "auto" (issue 21): the samples per layer task that minimise a training step's predicted time.
 *
 * The rule. For each candidate grain g (1, the powers of two below the batch per node b, and b itself, each
 * kept only when the machine's calibration covers tasks over g and b mod g samples), the step graph of two
 * training steps at grain g (dahl_stepgraph.h: the real program's tasks and their data dependencies) gets
 * every task's time from the calibration's perf models, plus the runtime's own cost per task (the machine's
 * measured scheduling push and worker cost per task; StarPU-SimGrid's 1 us where none is measured), and is
 * emulated by the scheduler lab (dahlsim_dag_emulate: list scheduling on the point's CPU and GPU workers,
 * AutoHeteroprio PRWS priorities; with a scheduler that places tasks by their perf models, dm* or heteroprio,
 * StarPU's slow-factor rule keeps a faster GPU's tasks off the CPUs unless many wait, as those schedulers do;
 * with the others, lws, eager, ws, ..., any idle worker takes the next task). The predicted step time is half that makespan, and at least the
 * submitting thread's time for the step's tasks (the measured submission cost per task). auto takes the
 * candidate with the least predicted time; a tie goes to the smaller grain. One grain for the whole network:
 * every layer's tasks cover the same samples (a per-layer grain would need the tensors between two layers
 * split two ways).
 *
 * StarPU-free, front end only. */
#ifndef DAHLSIM_GRAIN_H
#define DAHLSIM_GRAIN_H

#include "dahlsim_experiment.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#define DAHLSIM_GRAIN_MAX_CANDIDATES 20

/* Chooses among candidates[0 .. n) (ascending, candidates[0] == 1) for experiment x, whose batch per node is
 * batch: the choice in *grain, and a one-line account of it in choice ("auto: 2 of 1, 2, 4, 8, 14; predicted
 * step ..."). Returns 0, or a negative errno with the reason in err. */
int dahlsim_grain_auto(const struct dahlsim_experiment *x, long batch, const long *candidates, int n, long *grain,
                       char *choice, size_t choice_size, char *err, size_t err_size);

/* The rule's predicted time of one training step of x's network over batch samples at grain g on x's machine
 * and workers (seconds; emulated from the perf models by the scheduler lab, not simulated), and the busy time
 * it gives the CPU and the GPU workers per step (busy_s[0], busy_s[1]; busy_s may be NULL). Returns 0 or a
 * negative errno with the reason in err. */
int dahlsim_grain_step_predict(const struct dahlsim_experiment *x, long batch, long g, double *step_s,
                               double busy_s[2], char *err, size_t err_size);

struct dahlsim_dag;
struct dahlsim_emu_result;
struct dahl_network_desc;
/* The network x trains (its model on its dataset's images), into d. Returns 0 or -EINVAL with the reason in
 * err. */
int dahlsim_grain_network_desc(const struct dahlsim_experiment *x, struct dahl_network_desc *d, char *err,
                               size_t err_size);
/* The emulation behind the rule: `steps` training steps of x's network over batch samples at grain g, the
 * step graph exported with x's perf models and runtime costs per task, emulated on x's workers. dag (to
 * dahlsim_dag_fini) is the graph; task_end_s (NULL: not wanted; else to free) gets every task's end; res
 * (NULL: not wanted) the emulation's figures. Returns 0 or a negative errno with the reason in err. */
int dahlsim_grain_emulate(const struct dahlsim_experiment *x, long batch, long g, int steps, struct dahlsim_dag *dag,
                          double **task_end_s, struct dahlsim_emu_result *res, char *err, size_t err_size);

/* The task sizes a network trained on `batch` samples per step gets at grain (-1, or above the batch: the
 * batch): the grain, then the last group's rest when there is one. Returns how many (1 or 2), in out. */
int dahlsim_grain_task_sizes(long grain, long batch, long out[2]);

/* The first of those task sizes that root does not cover for x's setup (dahlsim_grain_covered), or 0. */
long dahlsim_grain_uncovered(const cJSON *root, const struct dahlsim_experiment *x, long grain, long batch);

/* Whether a machine's manifest (root, parsed; NULL: trusted) lists x's setup (shape, model, perf-model kind)
 * with tasks over n samples: n == 1, a manifest without "covered", or a covered entry whose "grains" holds n
 * (written by `machine synth --cover ...,grains=N` and `calibrate --cover ...,grain=N`). */
bool dahlsim_grain_covered(const cJSON *root, const struct dahlsim_experiment *x, long n);

#endif /* DAHLSIM_GRAIN_H */
