/* Starting and stopping the StarPU engine that runs dahl's task graphs, in either flavour (native or
 * SimGrid). One engine per process; the caller starts it once, submits work, and stops it. */
#ifndef DAHL_ENGINE_H
#define DAHL_ENGINE_H

#include <stdbool.h>

struct dahl_engine_conf {
    int ncpu;          /* CPU workers; -1 for StarPU's default (all cores, or the platform's CPU hosts) */
    int ngpu;          /* CUDA workers; -1 for StarPU's default, 0 for none */
    const char *sched; /* scheduling policy name ("eager", "dmda", ...); NULL for StarPU's default */
};

/* Returns the configuration meaning "StarPU's defaults". */
struct dahl_engine_conf dahl_engine_conf_default(void);

/* Starts StarPU with conf (borrowed, not kept). The policy named in conf wins over STARPU_SCHED in the
 * environment. Returns 0, -ENODEV when no worker can run, or another negative StarPU error code. */
int dahl_engine_start(const struct dahl_engine_conf *conf);

/* Waits for every submitted task, then shuts StarPU down. No-op when the engine is not started. */
void dahl_engine_stop(void);

/* StarPU's clock in microseconds: wall time natively, simulated time under SimGrid. */
double dahl_engine_now_us(void);

/* Number of workers of each kind the running engine has. */
int dahl_engine_ncpu(void);
int dahl_engine_ngpu(void);

/* True in the SimGrid build (tasks are simulated from perf models), false in the native build. */
bool dahl_engine_is_simulated(void);

/* The StarPU version this runtime was built against, e.g. "1.3.10" (static string). */
const char *dahl_engine_starpu_version(void);

/* The flavour this runtime was built against: "native" or "sim". */
const char *dahl_engine_flavour(void);

#endif /* DAHL_ENGINE_H */
