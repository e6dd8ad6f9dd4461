/* Starting and stopping the StarPU engine that runs dahl's task graphs, in either flavour (native or
 * SimGrid). One engine per process; the caller starts it once, submits work, and stops it. */
#ifndef DAHL_ENGINE_H
#define DAHL_ENGINE_H

#include "dahl_progress.h" /* enum dahl_progress_core */
#include "dahl_records.h" /* the record dahl_engine_worker_stats fills: struct dahl_worker_stats */

#include <stdbool.h>
#include <stddef.h>

struct dahl_heteroprio_conf;

/* One MPI rank's own workers and runtime costs (dahl_engine_conf's fields of the same names). */
struct dahl_engine_rank_conf {
    int ncpu, ngpu;
    double submit_us_per_task, input_copy_bytes_per_s, sched_push_us, worker_us_per_task;
};

struct dahl_engine_conf {
    int ncpu;          /* CPU workers; -1 for StarPU's default (all cores, or the platform's CPU hosts) */
    int ngpu;          /* CUDA workers; -1 for StarPU's default, 0 for none */
    const char *sched; /* scheduling policy name ("eager", "dmda", ...: dahl_schedconf.h lists them); NULL
                          for StarPU's default */
    bool profiling;    /* per-worker busy/idle accounting (dahl_engine_worker_stats); off by default */
    const struct dahl_heteroprio_conf *heteroprio; /* sched "heteroprio": buckets and lists (dahl_sched.h);
                                                      required with that policy, copied at start */
    /* Simulation only: the submitting thread's CPU time as measured on the real machine (dahlsim calibrate),
     * per submitted task and per byte of input image copied. 0: StarPU-SimGrid's own 1 us sleep per task. */
    double submit_us_per_task;
    double input_copy_bytes_per_s;
    /* Simulation only: the policy's cost per push_task call as measured on the real machine (dahlsim
     * calibrate), slept by the worker thread after each push it makes. 0: none (StarPU-SimGrid charges
     * nothing for the policy's own work). */
    double sched_push_us;
    /* Simulation only: the workers' runtime cost per task (dahlsim calibrate), charged to a worker after each
     * task it pops (a CPU worker executes it on its core: dahl_schedcost.c), in place of StarPU-SimGrid's 1 us
     * per input fetched (STARPU_SIMGRID_FETCHING_INPUT_COST, turned off). < 0: StarPU-SimGrid's own costs,
     * nothing charged. */
    double worker_us_per_task;
    /* Simulation over several nodes of different machines: each MPI rank's workers and costs (nranks
     * entries, borrowed), in place of the conf's own on that rank. Every entry must charge the same kinds of
     * cost (a submission cost > 0 or not, a worker cost >= 0 or not: StarPU reads the environment variables
     * that turn its own off once per process): only the figures differ. NULL: the conf's own everywhere. */
    const struct dahl_engine_rank_conf *ranks;
    int nranks;
    /* Simulation only: > 0 turns the codelets' energy models on (dahl_codelets_set_energy_watts, with the
     * watts of this node's platform hosts CPU0 and CUDA0) and sets STARPU_SCHED_GAMMA, what a joule is worth
     * in microseconds to the dm* policies. 0: off (StarPU's default gamma, every task 0 J). */
    double sched_gamma;
    /* StarPU-MPI builds: where the progression thread runs (dahl_progress.h). In simulation, "shared" (or
     * "auto" with every core holding a worker) has it take turns with the workers on their cores, and charges
     * the submitting thread there too; natively it is only recorded. */
    enum dahl_progress_core mpi_progress;
};

/* Where a simulation charges the submitting thread's CPU time (dahl_engine_charge_submission). */
enum dahl_submit_charge {
    DAHL_SUBMIT_NOT_CHARGED,   /* native run, or no measured cost (StarPU's 1 us sleep) */
    DAHL_SUBMIT_OWN_CORE,      /* the machine has a core no worker uses: the thread runs there */
    DAHL_SUBMIT_WORKER_CORES,  /* every core runs a worker: the thread takes its time from them, in turn */
};
/* DAHL_SUBMIT_WORKER_CORES runs the thread at DAHL_SUBMIT_SHARED_SHARE of a worker's core (dahl_records.h). */

/* Returns the configuration meaning "StarPU's defaults". */
struct dahl_engine_conf dahl_engine_conf_default(void);

/* Under SMPI (the sim-mpi flavour), the MPI rank of the calling simulated process before MPI and StarPU
 * start; -1 elsewhere. */
int dahl_engine_rank_before_start(void);

/* Starts StarPU with conf (borrowed, not kept). The policy named in conf wins over STARPU_SCHED in the
 * environment. Returns 0, -ENODEV when no worker can run, -EINVAL when conf.ranks has no entry for this rank, or
 * another negative StarPU error code. */
int dahl_engine_start(const struct dahl_engine_conf *conf);

/* Simulation: charges the submitting thread's CPU time for `tasks` submitted tasks and `copy_bytes` of
 * input copied, as the engine's conf says, in simulated time. Natively (and when nothing is charged): no-op. */
void dahl_engine_charge_submission(size_t tasks, size_t copy_bytes);
/* How the running engine charges it. */
enum dahl_submit_charge dahl_engine_submit_charge(void);
const char *dahl_engine_submit_charge_name(enum dahl_submit_charge c);

/* The scheduling policy's push_task calls and the workers' task handling since the engine started (still
 * readable after it stopped). */
struct dahl_sched_cost {
    bool wrapped;          /* false: no policy named in the conf (StarPU's default), nothing counted */
    bool pops_wrapped;     /* false: the policy has no pop_task (random, pheft): no handling figures */
    long worker_pushes;    /* calls made by worker threads (a task whose last dependency a worker released) */
    long other_pushes;     /* calls made by other threads (the one submitting tasks) */
    long worker_slow;      /* natively: calls over 100 us (preempted threads), left out of the means */
    long other_slow;
    double worker_push_us; /* natively: mean wall time per call, slow calls left out; 0 in simulation */
    double other_push_us;
    double charged_us;     /* simulation: slept after each worker push (conf.sched_push_us) */
    /* Cumulative since the engine started, on StarPU's clock (simulated time in simulation): */
    double worker_push_total_us; /* the workers' pushes, slow ones included (simulated: the charges) */
    double handling_us;    /* summed over the workers: from popping a task to asking for the next one */
};
void dahl_engine_sched_cost(struct dahl_sched_cost *out);

/* Scheduling contexts (StarPU's sched_ctx): a context over every worker, scheduled by its own instance of the
 * engine's policy (the same policy, wrapped as the global context's). Workers belong to the global context
 * and to every context created, so contexts share the machine. Returns the context's id (>= 1), or a
 * negative errno when the engine is not started. Contexts end with the engine. */
int dahl_engine_context_create(const char *name);
/* Makes the calling thread submit its tasks into context id; -1: back to none named (the global context;
 * waiting for all tasks then waits for every context's). */
void dahl_engine_context_use(int id);

/* Waits for every submitted task, then shuts StarPU down. No-op when the engine is not started. */
void dahl_engine_stop(void);

/* StarPU's clock in microseconds: wall time natively, simulated time under SimGrid. */
double dahl_engine_now_us(void);
/* Sleeps us microseconds on the runtime's clock (simulated time under SimGrid). */
void dahl_engine_sleep_us(double us);

/* Number of workers of each kind the running engine has. */
int dahl_engine_ncpu(void);
int dahl_engine_ngpu(void);

/* True when this build's StarPU can drive CUDA devices (--ngpu > 0 makes sense): a native StarPU built with
 * CUDA, or any SimGrid build (simulated GPUs, as many as the machine's platform file has). */
bool dahl_engine_has_cuda(void);

/* Number of workers of the running engine. */
int dahl_engine_worker_count(void);
/* Restarts every worker's counters from zero. */
void dahl_engine_worker_stats_reset(void);
/* Reads (and restarts) the counters of the first n workers into out (caller-owned, n entries). Returns the
 * number written, or -EPERM when the engine was not started with profiling. */
int dahl_engine_worker_stats(struct dahl_worker_stats *out, int n);

/* The SimGrid version this runtime was built against, e.g. "3.32" (static), or NULL in the native build. */
const char *dahl_engine_simgrid_version(void);

/* True in the SimGrid build (tasks are simulated from perf models), false in the native build. */
bool dahl_engine_is_simulated(void);

/* Energy (simulated runs whose platform gives power figures, e.g. `machine synth` of a spec with idle_w and
 * full_w): SimGrid's host energy plugin, each host's power linear in its load between its idle and
 * full-load watts. */
#define DAHL_ENGINE_MAX_ENERGY_HOSTS 256
struct dahl_host_energy {
    char host[32];
    double joules;
};
/* The joules each host with power figures (its platform entry's "dahl_power" property) has used so far, in
 * platform order, at most max into out; *source: where the figures come from (that property, e.g. "spec
 * sheet"; static). Returns how many: 0 natively and on platforms without power figures. */
int dahl_engine_energy(struct dahl_host_energy *out, int max, const char **source);

/* The StarPU version this runtime was built against, e.g. "1.3.10" (static string). */
const char *dahl_engine_starpu_version(void);

/* The flavour this runtime was built against: "native" or "sim". */
const char *dahl_engine_flavour(void);

#endif /* DAHL_ENGINE_H */
