/* dahl codelets, the StarPU-free part: the probe task, the perf-model kind every dahl codelet is built with
 * and the list of perf-model symbols. Perf-model symbols are a contract with calibration/: renaming one
 * means recalibrating every machine. The task insertion helpers, which take StarPU handles, are in
 * dahl_codelets_starpu.h (runtime code only). */
#ifndef DAHL_CODELETS_H
#define DAHL_CODELETS_H

#include "dahl_kernels.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Perf-model symbol "dahl_probe": a data-less task busy on one CPU for duration_us (footprint: the
 * duration rounded to whole microseconds). Submits one task; returns 0 or a negative StarPU error. The
 * probe is always history-based and is not in dahl_codelet_symbols() (its models are written by hand). */
int dahl_insert_probe(double duration_us);

/* "dahl_empty": a task that does nothing, reading `in` and updating `inout` (see codelets/probe.c). Submits
 * one task; returns 0 or a negative StarPU error. */
struct dahl_tensor;
int dahl_insert_empty(struct dahl_tensor *in, struct dahl_tensor *inout);

/* How StarPU models the cost of every dahl codelet: a table of measured times per footprint (history, the
 * default), or a fit of time against work (the task's flops) that extrapolates to unmeasured shapes:
 * a * size^b (regression) or a * size^b + c (nl-regression). dahl_softmax_xent stays history-based under
 * every kind: all its tasks have one size, over which StarPU never calibrates a regression. */
enum dahl_perfmodel_kind {
    DAHL_PERFMODEL_HISTORY,
    DAHL_PERFMODEL_REGRESSION,
    DAHL_PERFMODEL_NL_REGRESSION,
};

/* Parses "history", "regression" or "nl-regression" into *out. Returns 0, or -EINVAL (out untouched). */
int dahl_perfmodel_kind_parse(const char *name, enum dahl_perfmodel_kind *out);
/* The name dahl_perfmodel_kind_parse() accepts for kind (static string), or NULL for an unknown kind. */
const char *dahl_perfmodel_kind_name(enum dahl_perfmodel_kind kind);

/* Builds every dahl codelet's perf model (all of dahl_codelet_symbols()) as kind. Only before the first
 * dahl task is submitted in this process: returns 0, -EBUSY once a task was submitted (StarPU has then
 * loaded the models), or -EINVAL for an unknown kind. */
int dahl_codelets_set_perfmodel(enum dahl_perfmodel_kind kind);
/* The kind the perf models are built as now. */
enum dahl_perfmodel_kind dahl_codelets_perfmodel(void);

/* The perf-model symbols of every dahl codelet, e.g. "dahl_conv2d_forward" (static, *n entries): what a
 * calibration must measure and what a simulated machine's codelets/45/ directory must hold. */
const char *const *dahl_codelet_symbols(size_t *n);

/* ---- footprints and sizes: what StarPU keys and scales each codelet's perf model by ---------------------
 * Each codelet's footprint callback computes its footprint with these, from the task's arguments (or, for
 * dahl_accumulate and dahl_zero, the handle's element count); dahl_catalogue.c computes the same values from
 * layer shapes alone, so perf models can be written for tasks that never ran. Changing one of them changes
 * every footprint in calibration/: recalibrate. */
uint32_t dahl_conv2d_footprint_of(const struct dahl_conv2d_shape *s);  /* the three conv2d models */
uint32_t dahl_maxpool_footprint_of(const struct dahl_maxpool_shape *s); /* both max-pool models */
uint32_t dahl_relu_footprint_of(size_t n);                              /* both ReLU models */
uint32_t dahl_dense_footprint_of(int n_in, int n_out);                  /* the three dense models */
uint32_t dahl_softmax_xent_footprint_of(int k);
uint32_t dahl_sgd_update_footprint_of(size_t n, bool with_momentum);
uint32_t dahl_reduce_footprint_of(size_t n); /* dahl_accumulate and dahl_zero: n, the elements of dst */

/* A perf model's size (StarPU's size_base) from a task's flop count: every dahl codelet's size is
 * dahl_size_of_flops(its kernel's _flops()), except dahl_zero's, which is dahl_size_of_flops(n). Regression
 * models fit log(time) against log(size), so the size is positive even for a task that does no arithmetic. */
static inline size_t dahl_size_of_flops(double flops)
{
    return flops < 1.0 ? 1 : (size_t)flops;
}

#endif /* DAHL_CODELETS_H */
