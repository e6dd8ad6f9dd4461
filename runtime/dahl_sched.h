/* StarPU 1.3.10's heteroprio configured by the program: one bucket per task type (perf-model symbol, or
 * codelet name; or per symbol and footprint, see by_footprint), priority lists per architecture from a file or from AutoHeteroprio (dahl_autoprio.h),
 * slow factors from the perf models, task->priority = bucket. 1.3.10 has no automatic mode (1.4's
 * AutoHeteroprio is not reachable here), so dahl wraps heteroprio's push: every pushed task is mapped to its
 * type's bucket (a new type gets a new bucket), its successors are read from StarPU
 * (starpu_task_get_task_succs), and the lists are recomputed when a new type appears and every n-th push,
 * from execution times and idle proportions measured in the pre/post-execution hooks.
 * Ownership: dahl_engine_start copies the configuration. */
#ifndef DAHL_SCHED_H
#define DAHL_SCHED_H

#include "dahl_autoprio.h"

#include <stdbool.h>
#include <stddef.h>

#define DAHL_HETEROPRIO_MAX_TYPES 64

struct dahl_heteroprio_conf {
    bool autoprio;                         /* AutoHeteroprio; else the manual lists below */
    enum dahl_autoprio_heuristic heuristic;
    int interval;                          /* auto: recompute every interval-th pushed task (default 32) */
    /* One bucket per perf-model symbol and footprint ("dahl_conv2d_forward:34788a98"): tasks of one codelet
     * but different shapes (the two convolutions of LeNet) get their own priority and slow factor. Manual
     * lists still name symbols: a symbol stands for all its buckets, in their order of appearance. */
    bool by_footprint;
    /* Manual lists: type names (perf-model symbols, e.g. "dahl_conv2d_forward"), most wanted first. A type
     * run by the program but on neither list is appended to the lists of the architectures that can run
     * it; a type on one list only never runs on the other architecture. */
    int n[DAHL_NARCH];
    char names[DAHL_NARCH][DAHL_HETEROPRIO_MAX_TYPES][64];
};

/* Parses "auto:<heuristic>" or "auto:<heuristic>/footprint" (by_footprint) into conf (interval 32); false
 * when text is not of that form. */
bool dahl_heteroprio_parse_auto(const char *text, struct dahl_heteroprio_conf *conf);

/* What the scheduler ended with (once the tasks have run): number of types, recomputations, and each
 * architecture's list as comma-separated bucket names into lists[a] (room for every type's name). Returns
 * the number of types, 0 when heteroprio did not run. */
#define DAHL_HETEROPRIO_LIST_BYTES (DAHL_HETEROPRIO_MAX_TYPES * 65)
int dahl_heteroprio_summary(long *recomputes, char lists[DAHL_NARCH][DAHL_HETEROPRIO_LIST_BYTES]);

#endif /* DAHL_SCHED_H */
