/* The scheduler lab (library dahlsim_lab, sim/lab/; its command is `dahlsim dag`, sim/cmd/dag.c): task
 * graphs with per-type CPU/GPU costs (graph.c), a deterministic discrete-event emulation of Heteroprio on
 * C CPU + G GPU workers (emulate.c; no StarPU, no data transfers: the model of the AutoHeteroprio paper's
 * emulator), the paper's "control priorities" search (control.c), a lower bound (bound.c), its random graph
 * generator (generate.c) and the graphs of dahl's training steps (export.c). Graphs are JSON files.
 * Ownership: a dahlsim_dag owns its arrays (dahlsim_dag_fini frees them). */
#ifndef DAHLSIM_DAG_H
#define DAHLSIM_DAG_H

#include "dahl_autoprio.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DAHLSIM_DAG_MAX_TYPES 64

struct dahlsim_dag {
    int ntypes;
    char (*names)[64];     /* type names */
    double (*cost)[DAHL_NARCH]; /* seconds per task of the type on each arch; <= 0: cannot run there */
    int ntasks;
    int *type;             /* type of each task */
    int *pred_start, *pred; /* predecessors of task t: pred[pred_start[t] .. pred_start[t + 1]) */
    int *succ_start, *succ; /* successors, built from the predecessors */
    int cpus, gpus;        /* the machine the graph was made for (defaults for runs) */
    double pipeline_s;     /* makespan of the schedule the generator built the graph with (0: unknown) */
    /* Per-task seconds on each arch (NULL: every task costs its type's cost). Exported training graphs have
     * them: tasks of one type (perf-model symbol) differ in shape, and the type's cost is their mean. A task
     * costs <= 0 exactly where its type does. */
    double (*task_cost)[DAHL_NARCH];
    int *task_layer;       /* exported graphs: the layer each task works for (nlayers: the loss); NULL otherwise */
    char source[512];      /* where the graph comes from ("" for generated graphs) */
};

/* Builds g from ntypes types and ntasks tasks whose predecessors are given as CSR arrays (copied).
 * Predecessors must precede their task (pred < t). Returns 0, or -EINVAL/-ENOMEM with a reason in err. */
int dahlsim_dag_init(struct dahlsim_dag *g, int ntypes, const char *const *names, const double (*cost)[DAHL_NARCH],
                     int ntasks, const int *type, const int *pred_start, const int *pred, char *err,
                     size_t err_size);
void dahlsim_dag_fini(struct dahlsim_dag *g);
/* Gives g per-task costs (copied; ntasks rows). Returns 0, -EINVAL (a task with a cost where its type has
 * none, or none where its type has one) or -ENOMEM, with a reason in err. */
int dahlsim_dag_set_task_costs(struct dahlsim_dag *g, const double (*cost)[DAHL_NARCH], char *err, size_t err_size);
/* Seconds task t takes on arch (<= 0: it cannot run there). */
double dahlsim_dag_task_cost(const struct dahlsim_dag *g, int t, int arch);

/* JSON files: {"format": "dahlsim-dag-1", "cpus": C, "gpus": G, "pipeline_makespan_s": x,
 * "types": [{"name": "A", "cpu_s": 1, "gpu_s": 2}, ...], "tasks": [[type, pred, pred...], ...]}; a type
 * without "gpu_s" (or "cpu_s") cannot run there. Optional: "task_costs": [[cpu_s, gpu_s], ...] (one per
 * task, null where the type cannot run), "source": "...". Unknown keys are errors. Load errors name the
 * file and the field. */
int dahlsim_dag_load(const char *path, struct dahlsim_dag *g, char *err, size_t err_size);
int dahlsim_dag_save(const struct dahlsim_dag *g, const char *path, char *err, size_t err_size);

/* Priority lists: type indices, most wanted first, per architecture. A type missing from an
 * architecture's list is never run there. */
struct dahlsim_prio {
    int n[DAHL_NARCH];
    int order[DAHL_NARCH][DAHLSIM_DAG_MAX_TYPES];
};

/* Reads {"cpu": ["A", "C", "B"], "gpu": ["B", "C", "A"]} naming types of g. */
int dahlsim_prio_load(const char *path, const struct dahlsim_dag *g, struct dahlsim_prio *p, char *err,
                      size_t err_size);

struct dahlsim_emu_conf {
    int cpus, gpus;
    bool slow_factors;   /* StarPU 1.3.10's rule: a slower arch takes a task of a bucket only when the bucket
                            holds >= slow_factor tasks per worker of the faster arch (never when CPU is faster) */
    bool autoprio;       /* priorities from AutoHeteroprio (heuristic below), recomputed online */
    enum dahl_autoprio_heuristic heuristic;
    int interval;        /* auto: recompute every interval-th pushed task (and at each new type) */
    double *task_end_s;  /* NULL, or one entry per task: when it finished (written by the emulation) */
};

struct dahlsim_emu_result {
    double makespan_s;
    long tasks_on[DAHL_NARCH];
    double busy_s[DAHL_NARCH];
    struct dahlsim_prio last; /* the lists in force at the end (auto: the last computed) */
};

/* Emulates g under Heteroprio: workers 0..cpus-1 are CPUs, then GPUs; a ready task goes to its type's FIFO
 * bucket; whenever workers are idle they pick, in worker order, the head of the first non-empty bucket of
 * their architecture's list. Simultaneous completions are handled in worker order and release successors
 * in task order. prio is ignored in auto mode. Returns 0, or -EINVAL with a reason (a task that no worker
 * can run). */
int dahlsim_dag_emulate(const struct dahlsim_dag *g, const struct dahlsim_emu_conf *conf,
                        const struct dahlsim_prio *prio, struct dahlsim_emu_result *res, char *err,
                        size_t err_size);

/* The paper's control priorities: random lists (seeded), then rounds alternating CPU and GPU, each trying
 * every permutation of that architecture's list and keeping the fastest (ties: a random one among the
 * best), until a CPU+GPU round improves nothing or max_rounds. With more than 8 types on an architecture
 * (exported training graphs have 14 or more), trying every permutation is out of reach (14! lists): a round
 * then moves each type in turn to the position of the list where the makespan is least (insertion local
 * search; ties keep the earlier position), a documented departure from the paper. */
int dahlsim_dag_control(const struct dahlsim_dag *g, const struct dahlsim_emu_conf *conf, uint64_t seed,
                        int max_rounds, struct dahlsim_prio *best, double *makespan_s, char *err,
                        size_t err_size);

/* A lower bound of any schedule's makespan: max(critical path at best costs, the fractional two-arch area
 * bound). */
double dahlsim_dag_lower_bound(const struct dahlsim_dag *g, int cpus, int gpus);

/* Random graphs following the paper's protocol: task types with CPU/GPU costs and proportions, a
 * predecessor matrix P (P[i][j]: mean number of predecessors of type j of a type-i task), worker counts;
 * tasks are generated while filling a pipeline of workers, each on the earliest free worker of its best
 * architecture, its predecessors picked among tasks finished by then, so the pipeline is a known schedule
 * without idle time (pipeline_s). Same conf, same graph. */
struct dahlsim_dag_gen_conf {
    uint64_t seed;
    int ntasks;
    int min_types, max_types;
    int max_cpus, max_gpus;
};
int dahlsim_dag_generate(const struct dahlsim_dag_gen_conf *conf, struct dahlsim_dag *g, char *err,
                         size_t err_size);

/* The task graph of `steps` training steps of a dahl network (dahl_stepgraph.h) as a lab graph: types are
 * perf-model symbols (group_footprint: one type per symbol and footprint, named "symbol:footprint"), costs
 * the calibration's perf models (per task, and the mean per type). */
struct dahlsim_dag_export_conf {
    const char *machine_dir;  /* calibration/NAME */
    const char *machine;      /* NAME (the perf-model files' suffix) */
    int c, h, w;              /* image shape */
    const char *model;        /* lenet, deep, deep:N */
    int batch, steps, redux_copies;
    bool manual, momentum, group_footprint;
    int perfmodel;            /* enum dahl_perfmodel_kind */
    int cpus, gpus;
    int grain;                /* samples per layer task (0 or 1: one) */
    double per_task_s;        /* added to every task's cost on every arch (the runtime's own cost per task) */
};
int dahlsim_dag_export(const struct dahlsim_dag_export_conf *conf, struct dahlsim_dag *g, char *err,
                       size_t err_size);
struct dahl_network_desc;
/* The network conf->model names (lenet, deep, deep:N or a JSON model file: dahlsim_model.h) for conf's image
 * shape, 10 classes as `dahlsim train`. Returns 0 or -EINVAL with the reason in err. */
int dahlsim_dag_export_desc(const struct dahlsim_dag_export_conf *conf, struct dahl_network_desc *d, char *err,
                            size_t err_size);

#endif /* DAHLSIM_DAG_H */
