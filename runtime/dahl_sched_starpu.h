/* The StarPU side of dahl_sched.h, for dahl_engine.c only. */
#ifndef DAHL_SCHED_STARPU_H
#define DAHL_SCHED_STARPU_H

#include "dahl_sched.h"

#include <starpu.h>

/* Makes sconf run StarPU's heteroprio configured by conf (copied): sets sconf->sched_policy (a copy of
 * heteroprio with dahl's push and execution hooks) and sconf->sched_policy_init. Returns 0, or -EINVAL when
 * this StarPU has no heteroprio, -ENOMEM. */
int dahl_sched_configure(struct starpu_conf *sconf, const struct dahl_heteroprio_conf *conf);

#endif /* DAHL_SCHED_STARPU_H */
