/* results.json: what one training run (native `dahlsim train`, later simulated `dahlsim run`) measured,
 * in one schema for both modes so native and simulated runs compare field by field. The schema is
 * documented at the top of dahlsim_results.c. StarPU-free; the caller owns every array it points to. */
#ifndef DAHLSIM_RESULTS_H
#define DAHLSIM_RESULTS_H

#include "dahl_engine.h"
#include "dahl_profile.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One node's communication figures, as results.json's "nodes_detail" lists them. */
struct dahlsim_results_node {
    int rank;
    const char *machine;     /* the node's machine (calibration/NAME); NULL: natively, this one */
    long share;              /* samples of every step it trains */
    double bytes_sent, bytes_received;
    long messages_sent, messages_received;
    double comm_s;           /* summed allreduce time (dahl_mpi.h) */
    long allreduce_tasks;    /* accumulate tasks the allreduce added */
    struct dahl_progress_stats progress; /* its StarPU-MPI progression thread (runtime/dahl_progress.h) */
    long tasks;              /* tasks this node's workers executed */
    double busy_s;           /* summed busy time of this node's workers */
    const struct dahl_worker_stats *workers; /* this node's workers (into dahlsim_nodes.workers) */
    size_t nworkers;
};

struct dahlsim_results_epoch {
    int epoch;             /* 1-based */
    double loss;           /* mean training loss over the epoch */
    double train_accuracy; /* fraction in [0, 1] */
    double test_accuracy;  /* fraction in [0, 1] */
    double time_s;         /* training time of the epoch (evaluation excluded) */
    double eval_s;         /* evaluation time on the test set */
    /* "steady_state" runs: the steps simulated, and those extrapolated at step_s each (0: none) */
    long simulated_steps, extrapolated_steps;
    double steady_step_s;
};

struct dahlsim_results_count {
    const char *name; /* codelet perf-model symbol */
    long tasks;
};

/* --sched heteroprio: what dahl's heteroprio was given and ended with (dahl_sched.h). */
struct dahlsim_results_heteroprio {
    const char *priorities; /* "auto:HEURISTIC[/footprint]" or the lists file */
    const char *buckets;    /* "symbol" or "footprint" */
    int interval;           /* auto: lists recomputed every interval-th push; 0 for manual lists */
    int types;              /* buckets the run created */
    long recomputes;        /* times the lists were written into heteroprio */
    const char *lists[2];   /* the final lists, comma-separated bucket names, first wanted first: cpu, cuda */
};

/* The thread that submits the tasks. Native: what it spent during training (measured with the thread's CPU
 * clock); simulated: the cost the simulation charged for it (dahl_engine_charge_submission). */
struct dahlsim_results_submission {
    double thread_cpu_s;      /* native: its CPU time over the training phases */
    double thread_wait_s;     /* native: its time runnable but waiting for a core in them (< 0: unknown) */
    long tasks;               /* tasks it submitted in them */
    double copy_bytes;        /* input images it copied in, and its CPU time doing it */
    double copy_cpu_s;
    double us_per_task;       /* native: (thread_cpu_s - copy_cpu_s) / tasks; simulated: charged (0: none) */
    double copy_bytes_per_s;  /* native: copy_bytes / copy_cpu_s; simulated: charged (0: none) */
    const char *charged_on;   /* simulated: dahl_engine_submit_charge_name() */
    double core_share;        /* simulated, on worker cores: DAHL_SUBMIT_SHARED_SHARE (0: none) */
};

/* The scheduling policy's push_task calls over the whole run (dahl_engine_sched_cost): natively their mean
 * wall time, simulated the cost charged for each. */
struct dahlsim_results_scheduling {
    bool counted;                      /* false: StarPU's default policy, not wrapped (written as null) */
    long worker_pushes, other_pushes;  /* from worker threads, from others (the submitting thread) */
    long worker_slow, other_slow;      /* native: calls over 100 us, left out of the means */
    double worker_push_us, other_push_us; /* native */
    double charged_us;                 /* simulated: per worker push (0: none) */
    /* The workers' runtime cost per task over the training phases: their time from popping a task to
     * asking for the next, its execution and the pushes it made left out, per task executed. */
    double worker_us_per_task;         /* NaN (written as null): the policy has no pop_task to time */
    double worker_charged_us;          /* simulated: charged per task popped (< 0: StarPU-SimGrid's own costs) */
};

/* One job of a run where several share the machine ("workloads"). */
struct dahlsim_results_job {
    const char *name, *model, *dataset;
    int batch;
    long steps;             /* training steps, all epochs */
    double start_s;         /* when it arrived (the scenario's start_s) */
    double first_s, end_s;  /* its first step's start and its last step's end, since the run's start */
    double samples_per_s;   /* steps * batch / (end_s - first_s) */
    double loss_first, loss_last; /* native: mean loss of its first and of its last epoch (NaN simulated) */
    struct dahl_profile_job io;   /* transfers, evictions, GPU time */
};

/* Several jobs sharing the machine: the jobs, their totals and the order the GPU ran their steps in. */
struct dahlsim_results_jobs {
    const char *order;      /* fifo, round-robin, weight, ga, given */
    long window;            /* weight: steps per job in the window */
    const char *contexts;   /* StarPU scheduling contexts: shared or per-job */
    bool prefetch;          /* the next job's parameters prefetched to the GPU during each step */
    const struct dahlsim_results_job *jobs;
    size_t njobs;
    struct dahl_profile_job total; /* the jobs' figures summed, and StarPU's own buffers' */
    double gpu_busy_fraction;      /* GPU busy time over makespan x GPUs */
    const int *sequence;           /* the job of each job-step, in the order they ran */
    size_t nsequence;
};

struct dahlsim_results {
    const char *mode;      /* "native" or "simulated" */
    const char *scenario;  /* scenario file, or NULL (written as null) */
    const char *model;     /* "lenet", "deep:3", or a model file */
    const char *dataset;   /* "fashion-mnist", "synthetic:HxWxC" */
    const char *scheduler; /* a policy name, or heteroprio:auto-HEURISTIC[/footprint] */
    double sched_gamma;    /* > 0: energy-aware dm* placement, STARPU_SCHED_GAMMA; 0: off */
    long steady_warmup;      /* "steady_state": steps of each epoch left out of the mean step */
    double steady_tolerance; /* the error allowed on an epoch's time; 0: off (written as null) */
    const struct dahlsim_results_heteroprio *heteroprio; /* NULL: another policy (written as null) */
    int batch;
    int grain;             /* samples per layer task; 0: each job's batch (several jobs, grain "batch") */
    const char *grain_choice; /* how "grain": "auto" chose it, or NULL (written as null) */
    int pipeline_depth;       /* training steps in flight (1: synchronous) */
    const char *pipeline_schedule; /* "fill" or "1f1b" */
    int c, h, w;           /* image shape */
    int ncpu, ncuda;       /* workers */
    const char *reduction; /* "redux" or "manual" */
    const char *perfmodel; /* "history", "regression" or "nl-regression" */
    const char *kernel_models; /* which perf models a simulation read (dahlsim_kernels.h), or NULL (null) */
    int epochs;
    long iterations;       /* training steps, all epochs */
    long samples;          /* training samples per epoch */
    double makespan_s;     /* training time, all epochs (evaluation excluded), StarPU clock */
    const double *iteration_times_s;
    size_t niteration_times;
    double samples_per_s;  /* iterations * batch / makespan_s */
    const struct dahlsim_results_epoch *epochs_detail;
    size_t nepochs_detail;
    const struct dahlsim_results_count *per_codelet;
    size_t ncodelets;
    long tasks_cpu, tasks_cuda; /* tasks executed per worker architecture (training only) */
    const struct dahl_worker_stats *workers;
    size_t nworkers;
    const struct dahl_profile_link *links;     /* bytes moved per bus link (training only) */
    size_t nlinks;
    const struct dahl_profile_memnode *memory; /* peak memory per memory node (training only) */
    size_t nmemory;
    /* Multi-node runs (the StarPU-MPI flavours); nodes == 0: the single-node program, no nodes block. */
    int nodes;
    const char *allreduce;                          /* "tree" */
    const char *network;                            /* the scenario's network, or NULL (native) */
    enum dahl_progress_core mpi_progress_core;      /* where the progression threads ran (dahl_progress.h) */
    double mpi_progress_phase;                      /* their turns' shift, a share of the period (0: none) */
    const char *partition;                          /* "data" or "pipeline" (several nodes) */
    const long *stage_cuts;                         /* a pipeline: where stages 1.. start (nstages - 1) */
    long nstages;
    int replicas;                                   /* a hybrid: nodes per stage */
    const struct dahlsim_results_node *nodes_detail; /* nodes entries */
    const double *allreduce_times_s;                /* per iteration, the slowest node's */
    size_t nallreduce_times;
    /* Representative ranks (dahl_light.h): light ranks, representatives, and how much the light ranks'
     * gradients were late on their shifted ready times; light == 0: not used. */
    int light, representatives;
    double light_late_s;
    long light_late_grads;
    struct dahlsim_results_submission submission;
    struct dahlsim_results_scheduling scheduling;
    uint64_t seed;
    double wall_s;         /* the whole process, loading and evaluation included */
    long peak_rss_kib;
    /* This process's memory mappings (dahlsim_proc.h), after the first training step and at their peak
     * over the steps (sampled every 0.5 s of wall time and at the end); -1 where /proc has none. */
    long maps_first_step, maps_peak;
    const struct dahlsim_results_jobs *jobs; /* NULL: one job (no "jobs" block) */
    /* Simulated on a platform with power figures: each host's joules over the training phases, and where
     * the watts come from; nenergy 0: "energy" is null. */
    const struct dahl_host_energy *energy;
    size_t nenergy;
    const char *energy_source;
    double energy_samples; /* the samples those joules trained */
};

/* Writes dir/results.json atomically (dir/.results.json.tmp, then renamed). Returns 0, or -errno with a
 * one-line message naming the file in err. */
int dahlsim_results_save(const struct dahlsim_results *r, const char *dir, char *err, size_t err_size);

#endif /* DAHLSIM_RESULTS_H */
