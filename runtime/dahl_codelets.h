/* dahl codelets, the StarPU-free part: the probe task and the switch of the perf-model kind every dahl
 * codelet is built with. The names (perf-model symbols and kinds: dahl_perfnames.h) and the footprints
 * (dahl_footprint.h) need no StarPU run and live in runtime/model/. The task insertion helpers, which take
 * StarPU handles, are in dahl_codelets_starpu.h (runtime code only). */
#ifndef DAHL_CODELETS_H
#define DAHL_CODELETS_H

#include "dahl_footprint.h"
#include "dahl_kernels.h"
#include "dahl_perfnames.h"

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

/* Builds every dahl codelet's perf model (all of dahl_codelet_symbols()) as kind. Only before the first
 * dahl task is submitted in this process: returns 0, -EBUSY once a task was submitted (StarPU has then
 * loaded the models), or -EINVAL for an unknown kind. */
int dahl_codelets_set_perfmodel(enum dahl_perfmodel_kind kind);
/* The kind the perf models are built as now. */
enum dahl_perfmodel_kind dahl_codelets_perfmodel(void);

/* Every dahl codelet carries an energy model, which StarPU's dm* policies weigh with STARPU_SCHED_GAMMA
 * (microseconds a joule is worth): a task's joules on a worker are its expected time there times the extra
 * watts of a loaded CPU core (cpu_w) or GPU (cuda_w) over an idle one. Both 0 (the default): every task
 * costs 0 J, and the policies place tasks as without a model. */
void dahl_codelets_set_energy_watts(double cpu_w, double cuda_w);

#endif /* DAHL_CODELETS_H */
