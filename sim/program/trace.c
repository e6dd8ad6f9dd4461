/* OUT/trace of a training run: StarPU's FxT trace converted and compared with dahl's task records, then
 * dahl's own traces (dahlsim_trace.h). */
#include "train.h"
#include "dahl_layer.h"
#include "dahlsim_fs.h"
#include "dahlsim_trace.h"
#include "dahlsim_util.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Names of the network's layers for traces: conv1, relu1, pool1, ..., then "loss" (index nlayers). */
static void layer_names(const struct dahl_network_desc *desc, char names[][16], const char **out)
{
    for (int i = 0; i < desc->nlayers; i++) {
        const struct dahl_layer_type *k = dahl_layer_type_get(desc->layers[i].kind);
        int seen = 0; /* the layers of its kind up to this one */
        for (int j = 0; j <= i; j++)
            seen += desc->layers[j].kind == desc->layers[i].kind;
        snprintf(names[i], 16, "%s%d", k != NULL ? k->trace_name : "layer", seen);
        out[i] = names[i];
    }
    out[desc->nlayers] = "loss";
}

/* After the engine stopped: StarPU's FxT trace converted and compared with dahl's records, then dahl's own
 * traces and summary into OUT/trace. Native runs draw the Gantt chart here; simulated ones leave it to the
 * native front end (dahlsim run), which starts no process from inside a SimGrid simulation. */
int train_trace_write(struct run_state *st, const struct dahl_network_desc *desc)
{
    const struct train_opts *o = st->o;
    char dir[PATH_MAX], rec[PATH_MAX + 32], err[2 * PATH_MAX];
    if (o->trace_per_node) {
        /* Every rank its own directory; dahlsim run merges them into OUT/trace once every rank is done. */
        snprintf(dir, sizeof(dir), "%s/trace/node-%d", o->out, st->nodes.rank);
        int r = dahlsim_make_dirs(dir);
        if (r != 0) {
            dahlsim_error("--trace: cannot create %s: %s", dir, strerror(-r));
            return -EIO;
        }
    } else {
        snprintf(dir, sizeof(dir), "%s/trace", o->out);
    }
    struct dahl_profile_task *tasks;
    size_t ntasks = dahl_profile_tasks(&tasks);
    struct dahlsim_trace_fxt fxt = {0};
    struct dahlsim_trace_transfer *transfers = NULL;
    size_t ntransfers = 0;
    double t0 = dahlsim_mono_s();
    int fxt_ret = 0;
    if (o->trace_per_node) {
        /* No FxT trace: the multi-node simulator's static StarPU is built without FxT (no data transfer
         * times, no comparison). */
    } else if ((fxt_ret = dahl_profile_fxt_convert(err, sizeof(err))) == -ENOSPC) {
        dahlsim_error("--trace: %s", err);
        return -EIO;
    } else if (fxt_ret != 0) {
        fprintf(stderr, "dahlsim: warning: --trace: no StarPU FxT trace: %s\n", err);
    } else {
        snprintf(rec, sizeof(rec), "%s/starpu/tasks.rec", dir);
        if (dahlsim_trace_compare_fxt(rec, tasks, ntasks, &fxt, err, sizeof(err)) != 0)
            fprintf(stderr, "dahlsim: warning: --trace: cannot compare with StarPU's FxT trace: %s\n", err);
        snprintf(rec, sizeof(rec), "%s/starpu/paje.trace", dir);
        if (dahlsim_trace_paje_sort(rec, &fxt.paje_reordered, err, sizeof(err)) != 0)
            fprintf(stderr, "dahlsim: warning: --trace: %s\n", err);
        /* Only FxT knows when each transfer ran (StarPU 1.3.10 gives an application per-bus totals): dahl's
         * trace takes them from there, those of the training epochs only, the ones results.json's links
         * count (not StarPU's write-backs at shutdown, nor evaluation's). */
        else if (dahlsim_trace_fxt_transfers(rec, fxt.offset_us, st->link_windows_us, (size_t)o->epochs,
                                             &transfers, &ntransfers, err, sizeof(err)) != 0)
            fprintf(stderr, "dahlsim: warning: --trace: no data transfers: %s\n", err);
    }
    /* Memory node names by id, as results.json's links name them. */
    const char *node_names[RESULTS_MAX_NODES];
    size_t nnodes = 0;
    for (int m = 0; m < st->nmemory; m++)
        if (st->memory[m].id >= 0 && st->memory[m].id < RESULTS_MAX_NODES && (size_t)st->memory[m].id + 1 > nnodes)
            nnodes = (size_t)st->memory[m].id + 1;
    for (size_t m = 0; m < nnodes; m++)
        node_names[m] = "?";
    for (int m = 0; m < st->nmemory; m++)
        if (st->memory[m].id >= 0 && st->memory[m].id < RESULTS_MAX_NODES)
            node_names[st->memory[m].id] = st->memory[m].name;
    double t1 = dahlsim_mono_s();
    char names_buf[DAHL_NETWORK_MAX_LAYERS][16];
    const char *names[DAHL_NETWORK_MAX_LAYERS + 1];
    layer_names(desc, names_buf, names);
    char title[512];
    snprintf(title, sizeof(title), "%s, %s, batch %ld, %d CPU + %d GPU workers, %s, %s", o->model, o->dataset,
             o->batch, dahl_engine_ncpu(), dahl_engine_ngpu(), o->sched, st->simulated ? "simulated" : "native");
    struct dahlsim_trace_run run = {
        .title = title,
        .workers = st->workers,
        .nworkers = (size_t)st->nworkers,
        .tasks = tasks,
        .ntasks = ntasks,
        .layer_names = names,
        .nlayers = desc->nlayers,
        .first_step = o->trace_first >= 0 ? o->trace_first : 0,
        .last_step = o->trace_last >= 0 ? o->trace_last : st->iterations - 1,
        .fxt = fxt.present ? &fxt : NULL,
        .transfers = transfers,
        .ntransfers = ntransfers,
        .node_names = node_names,
        .nnodes = nnodes,
    };
    int written = dahlsim_trace_write(&run, dir, err, sizeof(err));
    if (written == 0 && o->trace_per_node)
        written = dahlsim_trace_records_save(&run, dir, err, sizeof(err));
    free(transfers);
    if (written != 0) {
        dahlsim_error("--trace: %s", err);
        return -EIO;
    }
    double t2 = dahlsim_mono_s();
    if (!st->simulated && dahlsim_trace_render(dir, err, sizeof(err)) != 0)
        fprintf(stderr, "dahlsim: warning: --trace: %s\n", err);
    if (!o->quiet)
        fprintf(stderr,
                "dahlsim %s: traced %zu tasks into %s (StarPU's FxT trace converted and compared in %.2f s, dahl's "
                "traces and summary written in %.2f s%s)\n",
                st->simulated ? "sim-train" : "train", ntasks, dir, t1 - t0, t2 - t1,
                st->simulated ? "" : ", Gantt chart drawn");
    return 0;
}
