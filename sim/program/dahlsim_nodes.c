/* Multi-node bookkeeping of `train` / `sim-train`: see dahlsim_nodes.h. Values travel to rank 0 as doubles
 * (counts stay exact below 2^53) through dahl_mpi_gather. */
#include "dahlsim_nodes.h"

#include "dahl_light.h"
#include "dahl_progress.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What every partition starts from: this rank, the node count, the network as dahlsim run recorded it. */
static void nodes_begin(struct dahlsim_nodes *n)
{
    memset(n, 0, sizeof(*n));
    /* Set by dahlsim run for sim-train: what the scenario said about the network, recorded as is. */
    n->network = getenv("DAHLSIM_NETWORK");
    n->rank = dahl_mpi_rank();
    n->size = dahl_mpi_size();
    n->mpi = dahl_mpi_built();
}

/* The gradient allreduce among ranks base .. base + size - 1 (size 0: all of them). */
static int nodes_allreduce(struct dahlsim_nodes *n, int base, int size, char *err, size_t err_size)
{
    n->allreduce = dahl_allreduce_create_among(DAHL_ALLREDUCE_TREE, base, size);
    if (n->allreduce != NULL)
        return 0;
    snprintf(err, err_size, "out of memory");
    return -ENOMEM;
}

int dahlsim_nodes_init(struct dahlsim_nodes *n, long batch, const long *shares, long nshares, char *err,
                       size_t err_size)
{
    nodes_begin(n);
    if (nshares > 0) {
        /* A data partition: node r trains shares[r] samples of every step, after those of the nodes before. */
        long sum = 0;
        for (long r = 0; r < nshares; r++) {
            if (r == n->rank)
                n->first = sum;
            sum += shares[r];
        }
        if (nshares != n->size || sum != batch) {
            snprintf(err, err_size, "--shares: expected one share per node (%d) summing to the batch (%ld), got %ld "
                                    "summing to %ld", n->size, batch, nshares, sum);
            return -EINVAL;
        }
        n->local_batch = (int)shares[n->rank];
    } else if (batch % n->size != 0) {
        snprintf(err, err_size, "--batch: expected a multiple of the %d nodes (each trains batch / nodes samples of "
                                "every step), got %ld", n->size, batch);
        return -EINVAL;
    } else {
        n->local_batch = (int)(batch / n->size);
        n->first = (long)n->rank * n->local_batch;
    }
    return n->size > 1 ? nodes_allreduce(n, 0, 0, err, err_size) : 0;
}

int dahlsim_nodes_init_pipeline(struct dahlsim_nodes *n, long batch, long nstages, long replicas, char *err,
                                size_t err_size)
{
    nodes_begin(n);
    n->pipeline = true;
    n->replicas = replicas > 1 ? (int)replicas : 1;
    if (nstages * n->replicas != n->size || batch % n->replicas != 0) {
        snprintf(err, err_size, "--stages, --replicas: expected %ld stages x %d replicas to be the %d nodes, and a "
                 "batch (%ld) the replicas split evenly", nstages, n->replicas, n->size, batch);
        return -EINVAL;
    }
    n->local_batch = (int)(batch / n->replicas);
    n->first = (long)(n->rank % n->replicas) * n->local_batch;
    /* a hybrid: the stage's replicas sum their gradients among themselves */
    return n->replicas > 1 ? nodes_allreduce(n, n->rank - n->rank % n->replicas, n->replicas, err, err_size) : 0;
}

void dahlsim_nodes_stop(struct dahlsim_nodes *n)
{
    dahl_allreduce_destroy(n->allreduce);
    n->allreduce = NULL;
}

void dahlsim_nodes_fini(struct dahlsim_nodes *n)
{
    free(n->detail);
    free(n->workers);
    free(n->allreduce_s);
    n->detail = NULL;
    n->workers = NULL;
    n->allreduce_s = NULL;
}

/* Gathers count values of every node to rank 0; *all (rank 0 only) is size * count values, to free. */
static int gather(const struct dahlsim_nodes *n, const double *mine, size_t count, double **all)
{
    *all = NULL;
    if (n->rank == 0) {
        *all = calloc((size_t)n->size * (count > 0 ? count : 1), sizeof(double));
        if (*all == NULL)
            return -ENOMEM;
    }
    int ret = dahl_mpi_gather(mine, count, *all);
    if (ret != 0) {
        free(*all);
        *all = NULL;
    }
    return ret;
}

/* shift_from >= 0: values are step end times from step shift_from on, and a light rank's (a copy of its
 * representative's, dahl_light.h) are moved by how much later it ended each step. */
static int merge(const struct dahlsim_nodes *n, double *values, size_t count, bool max, long shift_from)
{
    if (n->size == 1)
        return 0;
    double *all;
    int ret = gather(n, values, count, &all);
    if (ret != 0 || n->rank != 0)
        return ret;
    for (int r = 1; r < n->size && shift_from >= 0; r++)
        if (dahl_light_rep_of(r) != r)
            for (size_t i = 0; i < count; i++)
                all[(size_t)r * count + i] += dahl_light_shift_us(r, (size_t)shift_from + i);
    for (size_t i = 0; i < count; i++) {
        double v = all[i];
        for (int r = 1; r < n->size; r++) {
            double x = all[(size_t)r * count + i];
            v = max ? (x > v ? x : v) : v + x;
        }
        values[i] = v;
    }
    free(all);
    return 0;
}

int dahlsim_nodes_merge_max(const struct dahlsim_nodes *n, double *rel_s, size_t count)
{
    return merge(n, rel_s, count, true, -1);
}

int dahlsim_nodes_merge_sum(const struct dahlsim_nodes *n, double *values, size_t count)
{
    return merge(n, values, count, false, -1);
}

#define NODE_FIELDS 15

/* One worker as it travels to rank 0: raw bytes of the same binary on every rank, no pointers. */
struct worker_record {
    int32_t id;
    char name[64];
    char arch[8];
    int64_t tasks;
    double busy_s, sleeping_s, total_s;
};

/* Every node's workers to rank 0 (n->workers, and n->detail[r].workers); counts[r] is node r's count. */
static int gather_workers(struct dahlsim_nodes *n, const struct dahl_worker_stats *workers, size_t nworkers,
                          const double *counts)
{
    struct worker_record *mine = calloc(nworkers > 0 ? nworkers : 1, sizeof(*mine));
    size_t *sizes = NULL, total = 0;
    struct worker_record *all = NULL;
    int ret = -ENOMEM;
    if (mine == NULL)
        goto out;
    for (size_t w = 0; w < nworkers; w++) {
        /* calloc'ed: padding and unused name bytes are zeros, so the bytes sent are deterministic */
        mine[w].id = workers[w].id;
        snprintf(mine[w].name, sizeof(mine[w].name), "%s", workers[w].name);
        snprintf(mine[w].arch, sizeof(mine[w].arch), "%s", workers[w].arch);
        mine[w].tasks = workers[w].tasks;
        mine[w].busy_s = workers[w].busy_s;
        mine[w].sleeping_s = workers[w].sleeping_s;
        mine[w].total_s = workers[w].total_s;
    }
    if (n->rank == 0) {
        sizes = calloc((size_t)n->size, sizeof(*sizes));
        if (sizes == NULL)
            goto out;
        for (int r = 0; r < n->size; r++) {
            sizes[r] = (size_t)counts[r] * sizeof(*mine);
            total += (size_t)counts[r];
        }
        all = calloc(total > 0 ? total : 1, sizeof(*all));
        n->workers = calloc(total > 0 ? total : 1, sizeof(*n->workers));
        if (all == NULL || n->workers == NULL)
            goto out;
    }
    ret = dahl_mpi_gather_bytes(mine, nworkers * sizeof(*mine), all, sizes);
    if (ret != 0 || n->rank != 0)
        goto out;
    size_t k = 0;
    for (int r = 0; r < n->size; r++) {
        n->detail[r].workers = n->workers + k;
        n->detail[r].nworkers = (size_t)counts[r];
        for (size_t w = 0; w < (size_t)counts[r]; w++, k++) {
            const struct worker_record *x = &all[k];
            struct dahl_worker_stats *y = &n->workers[k];
            y->id = x->id;
            _Static_assert(sizeof(y->name) == sizeof(x->name), "worker names travel whole");
            memcpy(y->name, x->name, sizeof(y->name));
            y->name[sizeof(y->name) - 1] = '\0';
            y->arch = strcmp(x->arch, "cpu") == 0 ? "cpu" : strcmp(x->arch, "cuda") == 0 ? "cuda" : "other";
            y->tasks = x->tasks;
            y->busy_s = x->busy_s;
            y->sleeping_s = x->sleeping_s;
            y->total_s = x->total_s;
        }
    }
out:
    free(mine);
    free(sizes);
    free(all);
    return ret;
}

int dahlsim_nodes_finish(struct dahlsim_nodes *n, const struct dahl_worker_stats *workers, size_t nworkers)
{
    long tasks = 0;
    double busy_s = 0;
    for (size_t w = 0; w < nworkers; w++) {
        tasks += workers[w].tasks;
        busy_s += workers[w].busy_s;
    }
    struct dahl_allreduce_stats stats = {0};
    const double *start_us = NULL, *end_us = NULL;
    size_t steps = 0;
    if (n->allreduce != NULL) {
        dahl_allreduce_stats(n->allreduce, &stats);
        steps = dahl_allreduce_step_times(n->allreduce, &start_us, &end_us);
    }
    if (n->pipeline) { /* the stages' activation and gradient messages, with a hybrid's allreduce's */
        stats.bytes_sent += n->pipe.bytes_sent;
        stats.bytes_received += n->pipe.bytes_received;
        stats.messages_sent += n->pipe.messages_sent;
        stats.messages_received += n->pipe.messages_received;
    }
    /* Every rank submitted the same steps: the same count everywhere. */
    double *per_step = calloc(steps > 0 ? steps : 1, sizeof(double));
    if (per_step == NULL)
        return -ENOMEM;
    for (size_t i = 0; i < steps; i++)
        per_step[i] = end_us[i] > start_us[i] ? (end_us[i] - start_us[i]) / 1e6 : 0.0;
    int ret = merge(n, per_step, steps, true, -1);
    if (ret != 0) {
        free(per_step);
        return ret;
    }
    if (n->rank == 0) {
        n->allreduce_s = per_step;
        n->nallreduce = steps;
    } else {
        free(per_step);
    }
    struct dahl_progress_stats progress;
    dahl_progress_stats(&progress);
    double mine[NODE_FIELDS] = {stats.bytes_sent,       stats.bytes_received, (double)stats.messages_sent,
                                (double)stats.messages_received, stats.comm_s, (double)stats.tasks,
                                (double)tasks,          busy_s,               (double)nworkers,
                                progress.charged,       progress.share,       (double)progress.requests,
                                progress.pending_s,     progress.cpu_s,           progress.turn_wait_s};
    double *all = NULL;
    if (n->size > 1) {
        ret = gather(n, mine, NODE_FIELDS, &all);
        if (ret != 0)
            return ret;
    } else {
        all = malloc(sizeof(mine));
        if (all == NULL)
            return -ENOMEM;
        memcpy(all, mine, sizeof(mine));
    }
    double *counts = NULL;
    if (n->rank == 0) {
        n->detail = calloc((size_t)n->size, sizeof(*n->detail));
        counts = calloc((size_t)n->size, sizeof(*counts));
        if (n->detail == NULL || counts == NULL) {
            /* the other ranks are in the workers' gather already: this run cannot finish */
            free(all);
            free(counts);
            return -ENOMEM;
        }
        for (int r = 0; r < n->size; r++) {
            const double *v = all + (size_t)r * NODE_FIELDS;
            n->detail[r] = (struct dahlsim_results_node){
                .rank = r,
                .bytes_sent = v[0],
                .bytes_received = v[1],
                .messages_sent = (long)v[2],
                .messages_received = (long)v[3],
                .comm_s = v[4],
                .allreduce_tasks = (long)v[5],
                .tasks = (long)v[6],
                .busy_s = v[7],
                .progress = {.charged = v[9] != 0, .share = v[10], .requests = (long)v[11], .pending_s = v[12],
                             .cpu_s = v[13], .turn_wait_s = v[14]},
            };
            counts[r] = v[8];
        }
    }
    free(all);
    ret = gather_workers(n, workers, nworkers, counts);
    free(counts);
    return ret;
}

int dahlsim_nodes_step_times(const struct dahlsim_nodes *n, const double *end_us, size_t first, double start_us,
                             size_t count, double *iteration_s, double *train_s)
{
    end_us += first;
    double *rel = malloc((count > 0 ? count : 1) * sizeof(double));
    if (rel == NULL)
        return -ENOMEM;
    for (size_t i = 0; i < count; i++)
        rel[i] = end_us[i] - start_us;
    int ret = merge(n, rel, count, true, (long)first);
    if (ret != 0) {
        free(rel);
        return ret;
    }
    for (size_t i = 0; i < count; i++)
        /* rounded to the clock's nanoseconds: differences of large microsecond counts carry float noise */
        iteration_s[i] = round((rel[i] - (i == 0 ? 0.0 : rel[i - 1])) * 1e3) / 1e9;
    *train_s = count > 0 ? rel[count - 1] / 1e6 : 0.0;
    free(rel);
    return 0;
}

int dahlsim_nodes_sum_metrics(const struct dahlsim_nodes *n, double *loss_sum, long *correct, long *samples)
{
    double v[3] = {*loss_sum, (double)*correct, (double)*samples};
    int ret = dahlsim_nodes_merge_sum(n, v, 3);
    *loss_sum = v[0];
    *correct = (long)v[1];
    *samples = (long)v[2];
    return ret;
}

int dahlsim_nodes_merge_results(struct dahlsim_nodes *n, struct dahlsim_results_count *per_codelet, size_t ncodelets,
                                long *tasks_cpu, long *tasks_cuda, const struct dahl_worker_stats *workers,
                                size_t nworkers)
{
    double *v = malloc((ncodelets + 2) * sizeof(double));
    if (v == NULL)
        return -ENOMEM;
    for (size_t k = 0; k < ncodelets; k++)
        v[k] = (double)per_codelet[k].tasks;
    v[ncodelets] = (double)*tasks_cpu;
    v[ncodelets + 1] = (double)*tasks_cuda;
    int ret = dahlsim_nodes_merge_sum(n, v, ncodelets + 2);
    if (ret == 0 && n->rank == 0) {
        for (size_t k = 0; k < ncodelets; k++)
            per_codelet[k].tasks = (long)v[k];
        *tasks_cpu = (long)v[ncodelets];
        *tasks_cuda = (long)v[ncodelets + 1];
    }
    free(v);
    return ret != 0 ? ret : dahlsim_nodes_finish(n, workers, nworkers);
}
