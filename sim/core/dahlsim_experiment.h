/* One simulated experiment, fully resolved (a scenario without sweep, or one point of its grid), and its file:
 * the native front end resolves a scenario into this record (dahlsim_scenario.h) and hands it to the
 * training program under StarPU-SimGrid as OUT/point.json (`dahlsim-sim sim-train --point FILE`), one
 * save/load pair, so each key of an experiment lives here and nowhere else on its way. */
#ifndef DAHLSIM_EXPERIMENT_H
#define DAHLSIM_EXPERIMENT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#define DAHLSIM_MAX_JOBS 8          /* "workloads": jobs sharing one machine */
#define DAHLSIM_MAX_SEQUENCE 4096    /* job-steps of an explicit order */

/* One job of a "workloads" experiment: its own network, data and batch, trained in the same StarPU program
 * as the others (see sim/program/jobs.c). */
struct dahlsim_job {
    char name[32];
    char model[256];   /* lenet, deep, deep:N, or a model file (resolved) */
    char dataset[256]; /* fashion-mnist, cifar10:DIR or synthetic:HxWxC */
    long batch, samples;
    double start_s;    /* when the job arrives (no step of it runs before) */
    long priority;     /* informational: recorded, not used by the orders */
};

#define DAHLSIM_MAX_NODE_GROUPS 8
#define DAHLSIM_MAX_PSTATES 4 /* a node group's other machines for the planner */

/* One group of identical nodes of a multi-node experiment ("node_groups"): count nodes of one machine, each
 * training share samples of every step (a data partition: the shares of all nodes sum to the batch). */
struct dahlsim_node_group {
    char machine[72];           /* calibration/NAME, beside the experiment's machine (dahlsim_node_group_dir) */
    long count;                 /* nodes */
    long share;                 /* samples of each step, per node of the group */
    long cpus, gpus;            /* the machine's workers: a group uses them all */
    char pstates[256];          /* other machines the planner may put these nodes on (their CPU frequency
                                   states: machine synth --pstate), comma-separated; "" none */
    /* the machine's measured runtime costs, as the experiment's own below (0, 0, 0, -1: none) */
    double submit_us_per_task, input_copy_bytes_per_s, sched_push_us, worker_us;
};

struct dahlsim_experiment {
    char scenario[PATH_MAX];     /* the scenario file it comes from, as results.json records it ("" if none) */
    char machine[72];
    char machine_dir[PATH_MAX];  /* calibration/NAME */
    char model[PATH_MAX];        /* lenet, deep, deep:N, or a model file (resolved from the scenario's dir) */
    char dataset[256];           /* fashion-mnist, cifar10:DIR or synthetic:HxWxC */
    long samples, batch, epochs;
    long grain;          /* samples per layer task in [1, batch]; -1: the batch (each job's with workloads);
                            0: 1 */
    char grain_choice[256]; /* "grain": "auto": how it chose (dahlsim_grain.h); "" otherwise */
    char kernel_models[256]; /* which perf models the simulation reads, when not sampling/ (dahlsim_kernels.h) */
    long pipeline_depth;    /* training steps in flight (PipeDream-like); 0 or 1: synchronous */
    char pipeline_schedule[8]; /* "fill" or "1f1b" ("": fill) */
    char scheduler[48];  /* a policy, or heteroprio:auto-HEURISTIC[/footprint] */
    double sched_gamma;  /* > 0: the codelets' energy models on, STARPU_SCHED_GAMMA (us a joule is worth); 0: off */
    long steady_warmup;      /* "steady_state": steps of each epoch left out of the mean step */
    double steady_tolerance; /* > 0: the error allowed on an epoch's time when its rest is extrapolated; 0: off,
                              * every step simulated */
    long cpus, gpus;
    long gpu_memory_mib; /* 0: no limit */
    bool prefetch;
    bool trace;          /* traces of the run into <out>/trace (dahlsim_trace.h) */
    long trace_first, trace_last; /* traced training steps, 0-based inclusive; -1: all */
    char perfmodel[16];  /* history, regression, nl-regression */
    char reduction[8];   /* redux, manual */
    long seed;
    double lr, momentum;
    /* Multi-node ("nodes" present, even 1: StarPU-MPI over SMPI through starpu_smpirun; 0: absent) */
    long nodes;
    char network[160];           /* its description, as results.json records it */
    double network_bps;          /* per link, bits per second */
    double network_latency_s;    /* per link */
    char topology[16];           /* flat, fat-tree, torus */
    char mpi_progress_core[12];  /* auto, shared, dedicated (runtime/dahl_progress.h); "" without nodes */
    bool representative_ranks;   /* StarPU on one rank per node group, the others light (runtime/dahl_light.h) */
    double mpi_progress_phase;   /* the progression threads' turns shifted by this share of their period [0, 1) */
    /* "node_groups" (ngroups > 0): the nodes, group after group (ranks in that order), each with its share of
     * a step; machine, cpus, gpus and the costs below are then group 0's. 0: nodes of the one machine above,
     * batch / nodes samples each. */
    long ngroups;
    struct dahlsim_node_group groups[DAHLSIM_MAX_NODE_GROUPS];
    /* "partition": "" or "data" (each node its share of every step), or "pipeline" (every node a stage of
     * consecutive layers, all of every step's samples): stage_cuts, the layer each stage after the first
     * starts at, comma-separated ("6", "3,6") */
    char partition[16];
    char stage_cuts[160];
    long stage_replicas; /* "hybrid": nodes per stage, data-parallel among themselves; 0 or 1: a pipeline */
    /* "measured": the costs below come from the machine's manifest; "starpu": they stay off (0, 0, 0, -1)
     * and StarPU-SimGrid charges its own fixed costs. */
    char runtime_costs[16];
    /* The machine's measured cost of the thread submitting the tasks, for this dataset's image shape (its
     * manifest's "submission", written by dahlsim calibrate); 0: none (roofline machines, older
     * calibrations: StarPU-SimGrid's own 1 us sleep per task then). */
    double submit_us_per_task, input_copy_bytes_per_s;
    /* The machine's measured cost per push of this scheduler with these workers (its manifest's
     * "scheduling"); 0: none measured (StarPU-SimGrid gives the policy's own work no time). */
    double sched_push_us;
    /* ... and the workers' measured cost per task that the simulation charges in place of StarPU-SimGrid's
     * per-input cost (its "scheduling.worker_us"); < 0: none measured. */
    double worker_us;
    char point[512];     /* "batch=4 scheduler=dmda" for a sweep point, "" otherwise */
    /* Several jobs sharing the machine ("workloads"; njobs 0: one job, the fields above). The GPU runs one
     * job-step at a time in the order job_order gives: fifo (each job to its end, by arrival), round-robin,
     * weight (the weight heuristic over job_window steps), ga or given (the explicit sequence below, job
     * indices, the k-th occurrence of job j being its step k). job_contexts: "shared" (one StarPU
     * scheduling context) or "per-job" (one each, over the same workers). */
    long njobs;
    struct dahlsim_job jobs[DAHLSIM_MAX_JOBS];
    char job_order[16];
    char job_contexts[16];
    long job_window;
    long nsequence;
    int sequence[DAHLSIM_MAX_SEQUENCE];
};

/* Group g's calibration directory into buf: its machine beside x's (every machine of an experiment lives under
 * the same calibration root). Returns 0, or -ENAMETOOLONG when it does not fit. */
int dahlsim_node_group_dir(const struct dahlsim_experiment *x, const struct dahlsim_node_group *g, char *buf,
                           size_t size);
/* x's machine, its directory, workers and measured runtime costs made group g's (x then describes one node
 * of the group); and the reverse, g's workers and costs from x. */
void dahlsim_experiment_take_group(struct dahlsim_experiment *x, const struct dahlsim_node_group *g);
void dahlsim_node_group_take_experiment(struct dahlsim_node_group *g, const struct dahlsim_experiment *x);

/* Writes x to path as JSON ({"dahlsim_point": 1, "<field>": value, ...}, numbers exact), atomically.
 * Returns 0, or a negative errno with the file and cause in err. */
int dahlsim_experiment_save(const struct dahlsim_experiment *x, const char *path, char *err, size_t err_size);

/* Reads path, written by dahlsim_experiment_save, into x: every field present with its type, no other key.
 * Returns 0, or -EINVAL (a bad file: the file, the field and what was expected in err) or another negative
 * errno (it cannot be read). */
int dahlsim_experiment_load(const char *path, struct dahlsim_experiment *x, char *err, size_t err_size);

/* The CPU and CUDA host counts of a machine's platform (MACHINE_DIR/sampling/bus/MACHINE.platform.v4.xml, its
 * path into path): one CPU host per core. False when it cannot be read. */
bool dahlsim_platform_counts(const char *machine_dir, const char *machine, long *ncpu, long *ngpu, char *path,
                             size_t size);

#endif /* DAHLSIM_EXPERIMENT_H */
