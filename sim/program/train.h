/* The training program's parts, private to sim/program (train.c holds the algorithm: build, step, report).
 *
 * `dahlsim train`: trains a CNN natively, every layer of every sample a StarPU task, and reports per-epoch
 * loss and accuracy on stdout and, with --out DIR, DIR/results.json (the schema simulated runs share, see
 * dahlsim_results.c). Models: LeNet-5-like, a deeper variant, or layers described in a JSON file.
 * Native only: the SimGrid binary refuses it.
 *
 * `dahlsim-sim sim-train` (started by the native front end with STARPU_HOSTNAME and STARPU_PERF_MODEL_DIR
 * set, the experiment in --point FILE): the same program, the same options and the same task graph, replayed
 * by StarPU-SimGrid. No kernel runs and no pixel exists (shape-only data, folded tensors), so there is no
 * loss, accuracy or evaluation: epochs report only their simulated time, and results.json says "simulated". */
#ifndef DAHLSIM_PROGRAM_TRAIN_H
#define DAHLSIM_PROGRAM_TRAIN_H

#include "dahlsim_experiment.h"
#include "dahlsim_model.h"
#include "dahlsim_nodes.h"
#include "dahlsim_proc.h"
#include "dahlsim_results.h"

#include "dahl_codelets.h"
#include "dahl_dataset.h"
#include "dahl_dataset_name.h"
#include "dahl_engine.h"
#include "dahl_network.h"
#include "dahl_profile.h"

#include <stdbool.h>
#include <stddef.h>

#define NCLASSES DAHLSIM_NCLASSES

/* ---- options (options.c) ------------------------------------------------------------------------------ */

struct train_opts {
    const char *dataset;
    struct dahl_dataset_name data; /* --dataset parsed: its source and image shape */
    long epochs, samples, test_samples, batch, ncpu, ngpu, seed;
    long grain; /* samples per layer task (issue 21); -1: the batch (per node) */
    long pipeline_depth;                          /* steps in flight (issue 21); 1: synchronous */
    enum dahl_pipeline_schedule pipeline_schedule; /* fill or 1f1b */
    double lr, momentum;
    const char *sched;
    const char *priorities;  /* --sched heteroprio: FILE or auto:HEURISTIC (dahlsim_schedconf.h) */
    long priority_interval;
    const char *model;
    enum dahl_reduction reduction;
    enum dahl_perfmodel_kind perfmodel;
    const char *out;
    const char *scenario; /* the point's scenario, recorded in results.json; NULL: none */
    bool quiet;
    bool onnx_weights; /* --onnx-weights: the ONNX model's own weights, not dahl's initialisation */
    bool help;                    /* --help: printed, nothing else to do */
    bool trace;                   /* --trace: OUT/trace (dahlsim_trace.h) */
    long trace_first, trace_last; /* --trace-window, 0-based steps; -1: all */
    bool trace_per_node;          /* a multi-node point's trace: OUT/trace/node-RANK, merged by dahlsim run */
    /* The machine's measured runtime costs, which only a simulation charges (see dahl_engine_conf), from the
     * point: the submitting thread's (0: StarPU-SimGrid's own), the policy's per push (0: none), the
     * workers' per task (< 0: none). */
    double submit_us_per_task, input_copy_bytes_per_s;
    double sched_push_us;
    double worker_us;
    double sched_gamma; /* the point's: > 0, energy-aware dm* placement (dahl_engine_conf) */
    enum dahl_progress_core mpi_progress; /* --mpi-progress-core, or the point's (dahl_engine_conf) */
    double mpi_progress_phase;            /* the point's: the turns' shift ($DAHLSIM_PROGRESS_PHASE), recorded */
    long steady_warmup;      /* the point's "steady_state": steps of each epoch left out of the mean step */
    double steady_tolerance; /* the error on an epoch's time allowed (0: every step simulated) */
    /* --shares, or a point's node groups: the samples of each step every node trains, rank by rank (nshares
     * of them; 0: batch / nodes each), and, from a point's node groups, each rank's machine's workers and costs (ranks). */
    long shares[DAHLSIM_NODES_MAX];
    long nshares;
    /* --stages C1,C2,...: a pipeline partition, the layer each stage after the first starts at (nstages - 1
     * cuts, nstages nodes); nstages 0: none */
    long stages[DAHLSIM_NODES_MAX];
    long nstages;
    long replicas; /* --replicas R: nodes per stage, data-parallel among themselves (a hybrid); 1: none */
    struct dahl_engine_rank_conf ranks[DAHLSIM_NODES_MAX];
    long nranks;
    /* sim-train --point FILE: the experiment, which the strings above then point into (a train_opts is
     * filled in place and never copied). */
    const char *point;
    struct dahlsim_experiment x;
    char sched_policy[32], priorities_value[48];
};

/* Parses argv (train's options; sim-train also takes --point FILE, the experiment as the native front end
 * wrote it) into o (o->help: --help was printed, nothing to run). Returns 0, or -EINVAL after printing the
 * error. */
int train_parse_options(int argc, char **argv, bool simulated, struct train_opts *o);
/* Loads the train (train != 0) or test split of a file-backed dataset (fashion-mnist, cifar10:DIR), its first
 * max samples. Returns 0, or a negative errno after printing the error. */
int train_dataset_load(const struct dahl_dataset_name *name, int train, long max, struct dahl_dataset *out);

/* ---- the model (model.c) ------------------------------------------------------------------------------ */

/* Builds the network description of --model for an input of c x h x w; false after printing an error. */
bool train_model_desc(const char *model, int c, int h, int w, struct dahl_network_desc *d);
/* --onnx-weights: writes the ONNX file's weights into every layer of net (described by desc, read from that
 * file) before its first step; a no-op in a simulation. Returns 0, or a negative error after printing it. */
int train_onnx_weights(struct dahl_network *net, const char *model, const struct dahl_network_desc *desc);

/* ---- the run's state and its meter (meter.c) ---------------------------------------------------------- */

/* The progress line on stderr: redrawn in place on a terminal, a plain line every few seconds otherwise. */
struct progress {
    bool enabled, tty;
    double last_s;
};

void progress_show(struct progress *p, int epoch, int epochs, long done, long total, double elapsed_s);
void progress_clear(struct progress *p);

#define RESULTS_MAX_LINKS 64
#define RESULTS_MAX_NODES 16

struct run_state {
    const struct train_opts *o;
    bool simulated; /* StarPU-SimGrid: no metrics, no evaluation, times are simulated */
    struct dahl_dataset train, test;
    struct dahl_network *net;
    size_t nsymbols;
    const char *const *symbols;
    struct dahlsim_results_count *per_codelet;
    struct dahl_worker_stats *workers, *epoch_workers;
    int nworkers;
    double *iteration_s;
    long iterations;    /* steps in iteration_s, the extrapolated ones included */
    long extrapolated;  /* of which extrapolated ("steady_state"): the network ran iterations - extrapolated */
    struct dahlsim_results_epoch *epochs;
    double makespan_s;
    int grain; /* samples per layer task, resolved (one job; 0 with several) */
    struct dahlsim_nodes nodes; /* several nodes: this one's shard of every batch (dahlsim_nodes.h) */
    struct dahl_profile_link links[RESULTS_MAX_LINKS];
    int nlinks;
    struct dahl_profile_memnode memory[RESULTS_MAX_NODES];
    int nmemory;
    double *link_windows_us; /* per epoch: when the bus counters were reset and read (StarPU clock) */
    struct dahlsim_results_submission submission; /* native: summed over the epochs */
    /* The workers' task handling over the training phases (dahl_engine_sched_cost's cumulative figures,
     * differenced per epoch): from popping a task to asking for the next, the pushes in it, the tasks. */
    double handling_us, worker_push_us, busy_us;
    long handled_tasks;
    /* This process's memory mappings over the training steps, sampled on rank 0: under SMPI every rank's
     * simulated threads live in it, and each holds two mappings (stack and guard page). */
    struct dahlsim_proc_meter maps;
    /* Several jobs (jobs.c): their block of results.json, and the samples of an epoch of all of them, the
     * largest batch and the samples trained; NULL/0 for one job. */
    const struct dahlsim_results_jobs *jobs;
    long jobs_samples, jobs_batch, jobs_samples_done;
    /* Simulated on a platform with power figures: each host's joules over the training phases (summed from
     * energy_mark to energy_add), and where the watts come from; nenergy 0 otherwise. */
    struct dahl_host_energy energy[DAHL_ENGINE_MAX_ENERGY_HOSTS], energy_at[DAHL_ENGINE_MAX_ENERGY_HOSTS];
    int nenergy;
    const char *energy_source;
};

/* What one epoch's meter holds between its start and its end: the counters it differences. */
struct epoch_meter {
    size_t steps_before;          /* training steps done before the epoch */
    struct dahl_sched_cost sched; /* the scheduler's cumulative costs at the start */
    double start_us;              /* the runtime's clock when every node started the epoch */
    double cpu_s;                 /* the submitting thread's CPU time at the start (native) */
    double wait_s;                /* ... its time waiting for a core at the start (native; < 0: unknown) */
    long tasks;                   /* tasks submitted before the epoch */
    size_t copied;                /* input bytes copied before the epoch, and the CPU time it took */
    double copy_s;
    /* at its end: */
    double train_s;               /* the epoch's training time (the slowest node's) */
    double loss_sum;              /* summed over every node */
    long correct, samples;
};

/* The hosts' energy now, as the start of a training phase; energy_add adds times what they used since to
 * st->energy. */
void energy_mark(struct run_state *st);
void energy_add(struct run_state *st, double times);

/* Starts epoch e's meter: counters reset or read, then the nodes wait for each other (the epoch starts
 * together everywhere). Returns 0 or a negative errno. */
int meter_epoch_start(struct run_state *st, int e, struct epoch_meter *m);
/* After each of epoch e's steps: the progress line and the memory mappings. */
void meter_step(struct run_state *st, const struct epoch_meter *m, struct progress *p, int e, long steps);
/* Ends epoch e's meter after its steps: the step times, the epoch's time, metrics and counters into st.
 * Returns 0 or a negative errno. */
int meter_epoch_end(struct run_state *st, int e, long steps, struct epoch_meter *m);

/* A simulation's "steady_state" (the point's steady_tolerance > 0): after each submitted step, whether the steps
 * done so far in the epoch are steady enough that counting the rest at their mean step would change the
 * epoch's time by at most steady_tolerance (relative), with no growth of the memory peak over the last
 * block of steps (meter.c: steady_reached). */
struct steady_watch {
    long warmup, steps;
    double tolerance;
    size_t first;     /* the network's index of the epoch's first step */
    double *ends;     /* the epoch's step end times so far (steps entries) */
    int64_t *peaks;   /* the memory peak when n steps of the epoch were done (-1: not seen) */
};
/* Starts watching an epoch of steps steps whose first is the network's step first. Returns 0 or -ENOMEM. */
int steady_start(struct steady_watch *w, const struct train_opts *o, long steps, size_t first);
/* After submitted steps of the epoch: true once steady, *step_s then the mean step to count the rest at. */
bool steady_reached(struct steady_watch *w, struct run_state *st, long submitted, double *step_s);
void steady_stop(struct steady_watch *w);
/* After meter_epoch_end of the simulated steps: counts more steps of step_s each into the epoch (m->train_s),
 * the run's makespan and step times, and scales the epoch's energy by the time. */
void steady_extrapolate(struct run_state *st, struct epoch_meter *m, long more, double step_s);

/* ---- the engine (train.c) and several jobs (jobs.c) ------------------------------------------------------ */

/* The kernels, the perf-model kind and StarPU with the options' workers, scheduler and charged costs. Returns
 * 0, or a negative errno after printing the error (-ENODEV: no worker to run on). */
int train_engine_start(const struct train_opts *o);

/* The jobs of o->x.jobs trained together, one job-step at a time in o->x.job_order (see jobs.c); starts and
 * stops the engine. Returns 0, or a negative errno after printing the error. */
int jobs_main(const struct train_opts *o, bool simulated, double wall_start_s);

/* ---- what the run leaves (results.c, trace.c) --------------------------------------------------------- */

/* OUT/results.json from the run's state (rank 0 writes it; the others send their figures). Returns 0, or
 * a negative errno after printing the error. */
int train_results_write(struct run_state *st, double wall_start_s);
/* OUT/trace after the engine stopped. Returns 0, or a negative errno after printing the error. */
int train_trace_write(struct run_state *st, const struct dahl_network_desc *desc);

#endif /* DAHLSIM_PROGRAM_TRAIN_H */
