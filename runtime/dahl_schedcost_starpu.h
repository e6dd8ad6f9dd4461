/* The scheduling policy's cost per push, measured natively and charged in simulation; for dahl_engine.c
 * only (the figures reach the rest through dahl_engine_sched_cost). */
#ifndef DAHL_SCHEDCOST_STARPU_H
#define DAHL_SCHEDCOST_STARPU_H

#include "dahl_engine.h"
#include "dahl_starpu.h"

/* Makes sconf's policy (sconf->sched_policy, else the predefined one sconf->sched_policy_name names) a copy
 * whose push_task is timed natively and, in simulation, followed by a sleep of charge_us (> 0) when a worker
 * thread pushes, and whose pop_task sums each worker's time from a popped task to its next pop and, in
 * simulation, sleeps worker_us (> 0) after each pop that returns a task (policies without pop_task, random
 * and pheft, get neither). Without a named policy nothing is wrapped. Resets the figures. */
void dahl_schedcost_wrap(struct starpu_conf *sconf, double charge_us, double worker_us);

/* The figures since the last wrap. */
void dahl_schedcost_get(struct dahl_sched_cost *out);

#endif /* DAHL_SCHEDCOST_STARPU_H */
