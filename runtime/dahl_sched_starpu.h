/* The StarPU side of dahl_sched.h, for dahl_engine.c and dahl_schedcost.c only. */
#ifndef DAHL_SCHED_STARPU_H
#define DAHL_SCHED_STARPU_H

#include "dahl_sched.h"

#include <starpu.h>

/* Makes sconf run StarPU's heteroprio configured by conf (copied): sets sconf->sched_policy (a copy of
 * heteroprio with dahl's push and execution hooks) and sconf->sched_policy_init. Returns 0, or -EINVAL when
 * this StarPU has no heteroprio, -ENOMEM. */
int dahl_sched_configure(struct starpu_conf *sconf, const struct dahl_heteroprio_conf *conf);

/* StarPU's predefined policy called name ("lws", "dmda", ...), or NULL (name NULL or unknown). */
const struct starpu_sched_policy *dahl_sched_predefined(const char *name);

#endif /* DAHL_SCHED_STARPU_H */
