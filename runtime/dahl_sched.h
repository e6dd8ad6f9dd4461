/* StarPU 1.3.10's heteroprio configured by the program: one bucket per task type (perf-model symbol, or
 * codelet name; or per symbol and footprint, see by_footprint), priority lists per architecture from a file
 * or from AutoHeteroprio (dahl_autoprio.h), slow factors from the perf models, task->priority = bucket.
 * 1.3.10 has no automatic mode (1.4's AutoHeteroprio is not reachable here), so dahl wraps heteroprio's
 * push: every pushed task is mapped to its type's bucket (a new type gets a new bucket), its successors are
 * read from StarPU (starpu_task_get_task_succs), and the lists are recomputed when a new type appears and
 * every n-th push, from execution times and idle proportions measured in the pre/post-execution hooks. The
 * configuration itself (struct dahl_heteroprio_conf) is StarPU-free: dahl_schedconf.h.
 * Ownership: dahl_engine_start copies the configuration. */
#ifndef DAHL_SCHED_H
#define DAHL_SCHED_H

#include "dahl_schedconf.h" /* struct dahl_heteroprio_conf, the policy names */

#include <stdbool.h>
#include <stddef.h>

/* What the scheduler ended with (once the tasks have run): number of types, recomputations, and each
 * architecture's list as comma-separated bucket names into lists[a] (room for every type's name). Returns
 * the number of types, 0 when heteroprio did not run. */
#define DAHL_HETEROPRIO_LIST_BYTES (DAHL_HETEROPRIO_MAX_TYPES * 65)
int dahl_heteroprio_summary(long *recomputes, char lists[DAHL_NARCH][DAHL_HETEROPRIO_LIST_BYTES]);

#endif /* DAHL_SCHED_H */
