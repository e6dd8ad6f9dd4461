/* Traces of one training run from dahl's per-task records (dahl_records.h): a Paje trace (ViTE, pj_dump), a
 * Chrome trace-event JSON (Perfetto, chrome://tracing), a Gantt chart (gnuplot, PNG and SVG) and a utilisation
 * summary (summary.json and summary.txt). Also checks those records against StarPU's own FxT trace of the same
 * run (tasks.rec written by StarPU's converter): same tasks on the same workers at the same times.
 * StarPU-free. Files written into DIR:
 *   dahl.paje        Paje: one container per worker, states named by codelet, Idle, Fetching input, Scheduling;
 *                    one container per memory node and one link per data transfer between two of them
 *   trace.json       Chrome trace events: one thread per worker, one complete event per task and input wait, one
 *                    async event (b/e) per data transfer
 *   gantt.dat/.gp    the Gantt chart's data and gnuplot script; gantt.png and gantt.svg once rendered
 *   summary.json     per worker: time per codelet, idle, transfer wait, scheduler time; per layer and pass:
 *                    first-to-last task time per step; parallel efficiency; the FxT comparison
 *   summary.txt      the same as text tables */
#ifndef DAHLSIM_TRACE_H
#define DAHLSIM_TRACE_H

#include "dahl_records.h" /* struct dahl_profile_task, struct dahl_worker_stats */

#include <stdbool.h>
#include <stddef.h>

/* How dahl's records compare with StarPU's FxT trace of the same run (tasks matched by job id). */
struct dahlsim_trace_fxt {
    bool present;             /* an FxT tasks.rec was read */
    long fxt_tasks;           /* tasks with a worker in tasks.rec */
    long matched;             /* dahl records found in tasks.rec */
    long missing;             /* dahl records not in tasks.rec (outside FxT's recording window) */
    long worker_mismatches;   /* matched tasks placed on another worker by FxT */
    double offset_us;         /* FxT clock - StarPU profiling clock: the median over matched tasks */
    double p99_diff_us;       /* after removing the offset: 99th percentile of start and end differences */
    double max_start_diff_us; /* after removing the offset */
    double max_end_diff_us;
    long paje_reordered;      /* events of StarPU's paje.trace put back in time order (dahlsim_trace_paje_sort) */
};

/* One data transfer between two memory nodes. StarPU 1.3.10 tells an application only how many bytes crossed
 * each bus (starpu_bus_get_profiling_info); times per transfer exist only in its FxT trace, so they are read
 * from the Paje file StarPU's converter writes (dahlsim_trace_fxt_transfers). */
struct dahlsim_trace_transfer {
    int src, dst;             /* StarPU memory node ids */
    long long bytes;
    double start_us, end_us;  /* on StarPU's profiling clock (FxT's clock minus the measured offset) */
    const char *kind;         /* "fetch", "prefetch" or "idle fetch" (static) */
};

struct dahlsim_trace_run {
    const char *title;                      /* one line: model, dataset, batch, workers, scheduler, mode */
    const struct dahl_worker_stats *workers; /* names and architectures, by worker id */
    size_t nworkers;
    struct dahl_profile_task *tasks;        /* sorted in place (by start, worker, job) */
    size_t ntasks;
    const char *const *layer_names;         /* nlayers + 1 entries: layer i, then the loss */
    int nlayers;
    long first_step, last_step;             /* the traced steps, 0-based inclusive */
    const struct dahlsim_trace_fxt *fxt;    /* NULL: no FxT trace */
    struct dahlsim_trace_transfer *transfers; /* sorted in place (by start); those naming a node outside
                                                 node_names are dropped; none without an FxT trace */
    size_t ntransfers;
    const char *const *node_names;          /* by memory node id, nnodes entries ("NUMA 0", "CUDA 0") */
    size_t nnodes;
    const int *worker_host;                 /* multi-node runs merged: the node (rank) of each worker; NULL: one */
    int nhosts;
};

/* Reads tasks.rec (StarPU's converter output) and compares it with tasks[] (any order). Returns 0, or -errno
 * with a message naming the file in err. */
int dahlsim_trace_compare_fxt(const char *tasks_rec, const struct dahl_profile_task *tasks, size_t ntasks,
                              struct dahlsim_trace_fxt *out, char *err, size_t err_size);

/* Puts the events of the Paje file path in time order (a stable sort; lines without a time stay after the
 * line they followed). StarPU 1.3.10's converter writes a few events of native multi-threaded runs out of
 * order (thousands of events, by up to milliseconds), which pj_dump refuses. *moved: the events that came
 * after a later one (0: the file was in order and is left untouched). Returns 0 or -errno with a message. */
int dahlsim_trace_paje_sort(const char *path, long *moved, char *err, size_t err_size);

/* Reads the data transfers of StarPU's converted FxT trace (a Paje file: PajeStartLink/PajeEndLink pairs of
 * the fetch, prefetch and idle-fetch link types between memory-manager containers "mmN", matched by key),
 * moves them onto StarPU's profiling clock (minus offset_us) and keeps those that start within one of the
 * nwindows [windows[2i], windows[2i+1]] intervals (profiling clock, microseconds; nwindows 0: keep all).
 * *out is malloc'ed (free it). Returns 0, or -errno with a message naming the file in err. */
int dahlsim_trace_fxt_transfers(const char *paje_trace, double offset_us, const double *windows, size_t nwindows,
                                struct dahlsim_trace_transfer **out, size_t *n, char *err, size_t err_size);

/* Writes every file but the images into dir (which must exist); sorts run's tasks and transfers. Returns 0 or -errno with a message. */
int dahlsim_trace_write(struct dahlsim_trace_run *run, const char *dir, char *err, size_t err_size);

/* Multi-node runs: every rank traces its own node into DIR/node-RANK/ (dahlsim_trace_write) and saves its
 * records there too (records.tsv: title, workers, layer names and tasks, exact), from which the front end
 * merges the nodes into DIR: one Paje container per node holding its workers, one Gantt row per node and
 * worker, one summary over every node's workers. StarPU-SimGrid gives every rank the same simulated clock. */
int dahlsim_trace_records_save(const struct dahlsim_trace_run *run, const char *dir, char *err, size_t err_size);
/* Reads DIR/node-0 .. node-(nodes-1)/records.tsv and writes the merged files into DIR (not the images).
 * Returns 0 or -errno with a message naming the file. */
int dahlsim_trace_merge_nodes(const char *dir, int nodes, char *err, size_t err_size);

/* Renders dir/gantt.gp with gnuplot into dir/gantt.png and dir/gantt.svg. Returns 0, or -1 with a message. */
int dahlsim_trace_render(const char *dir, char *err, size_t err_size);

/* Parses "START:END" (1-based training steps, inclusive, START <= END) into 0-based first/last. Prints an
 * error naming `what` (an option or a scenario field) and returns false when malformed. */
bool dahlsim_trace_window_parse(const char *what, const char *text, long *first, long *last);

#endif /* DAHLSIM_TRACE_H */
