/* The Heteroprio emulator (see dahlsim_dag.h): a discrete-event run of a lab graph on C CPU + G GPU workers,
 * with fixed priority lists or AutoHeteroprio's (dahl_autoprio.h, the tracker the live scheduler feeds too).
 * Deterministic: simultaneous events are handled in worker order and release successors in task order. */
#include "dahlsim_dag.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct emu {
    const struct dahlsim_dag *g;
    const struct dahlsim_emu_conf *conf;
    int nworkers;
    int *indeg;        /* predecessors not finished yet */
    int *queue;        /* per type FIFO, laid out by type: qbase[type] .. */
    int *qbase, *qhead, *qtail;
    int *running;      /* task per worker, -1 when idle */
    double *start, *finish;
    double busy_done[DAHL_NARCH]; /* busy time of finished tasks */
    struct dahlsim_prio prio;
    struct dahl_autoprio *ap;
    int *succ_types;   /* scratch for autoprio pushes */
    double *succ_indeg;
    int *list_buf[DAHL_NARCH];
};

static int worker_arch(const struct emu *e, int w)
{
    return w < e->conf->cpus ? DAHL_ARCH_CPU : DAHL_ARCH_GPU;
}

static void emu_free(struct emu *e)
{
    free(e->indeg);
    free(e->queue);
    free(e->qbase);
    free(e->qhead);
    free(e->qtail);
    free(e->running);
    free(e->start);
    free(e->finish);
    free(e->succ_types);
    free(e->succ_indeg);
    free(e->list_buf[0]);
    free(e->list_buf[1]);
    dahl_autoprio_destroy(e->ap);
}

/* Idle proportion of each architecture over [0, now]. */
static void emu_idle(const struct emu *e, double now, double idle[DAHL_NARCH])
{
    double busy[DAHL_NARCH] = {e->busy_done[0], e->busy_done[1]};
    int count[DAHL_NARCH] = {e->conf->cpus, e->conf->gpus};
    for (int w = 0; w < e->nworkers; w++)
        if (e->running[w] >= 0)
            busy[worker_arch(e, w)] += now - e->start[w];
    for (int a = 0; a < DAHL_NARCH; a++)
        idle[a] = now > 0.0 && count[a] > 0 ? 1.0 - busy[a] / (now * count[a]) : 1.0;
}

static void emu_push(struct emu *e, int t, double now)
{
    const struct dahlsim_dag *g = e->g;
    int ty = g->type[t];
    e->queue[e->qbase[ty] + e->qtail[ty]++] = t;
    if (e->ap == NULL)
        return;
    int n = 0;
    for (int k = g->succ_start[t]; k < g->succ_start[t + 1]; k++) {
        int s = g->succ[k];
        e->succ_types[n] = g->type[s];
        e->succ_indeg[n++] = (double)(g->pred_start[s + 1] - g->pred_start[s]);
    }
    if (dahl_autoprio_push(e->ap, ty, n, e->succ_types, e->succ_indeg)) {
        double idle[DAHL_NARCH];
        emu_idle(e, now, idle);
        dahl_autoprio_set_idle(e->ap, idle);
        dahl_autoprio_lists(e->ap, e->list_buf, e->prio.n);
        for (int a = 0; a < DAHL_NARCH; a++)
            memcpy(e->prio.order[a], e->list_buf[a], (size_t)e->prio.n[a] * sizeof(int));
    }
}

/* The task worker w takes now under Heteroprio, or -1. */
static int emu_pick(struct emu *e, int w)
{
    const struct dahlsim_dag *g = e->g;
    int a = worker_arch(e, w);
    int count[DAHL_NARCH] = {e->conf->cpus, e->conf->gpus};
    for (int k = 0; k < e->prio.n[a]; k++) {
        int ty = e->prio.order[a][k];
        int queued = e->qtail[ty] - e->qhead[ty];
        if (queued == 0)
            continue;
        if (e->conf->slow_factors) {
            /* StarPU 1.3.10 heteroprio's pop: the faster arch of the bucket, or CPU faster (index 0: the
             * check is skipped), or enough tasks per faster worker. */
            const double *c = g->cost[ty];
            int faster = c[DAHL_ARCH_GPU] > 0.0 && (c[DAHL_ARCH_CPU] <= 0.0 || c[DAHL_ARCH_GPU] < c[DAHL_ARCH_CPU])
                             ? DAHL_ARCH_GPU
                             : DAHL_ARCH_CPU;
            if (faster != DAHL_ARCH_CPU && a != faster && count[faster] > 0 &&
                (double)queued / count[faster] < c[a] / c[faster])
                continue;
        }
        return e->queue[e->qbase[ty] + e->qhead[ty]++];
    }
    return -1;
}

int dahlsim_dag_emulate(const struct dahlsim_dag *g, const struct dahlsim_emu_conf *conf,
                        const struct dahlsim_prio *prio, struct dahlsim_emu_result *res, char *err,
                        size_t err_size)
{
    struct emu e = {.g = g, .conf = conf, .nworkers = conf->cpus + conf->gpus};
    memset(res, 0, sizeof(*res));
    if (conf->cpus < 0 || conf->gpus < 0 || e.nworkers < 1) {
        snprintf(err, err_size, "expected at least one worker, got %d CPUs and %d GPUs", conf->cpus, conf->gpus);
        return -EINVAL;
    }
    size_t n = (size_t)g->ntasks + 1, nt = (size_t)g->ntypes;
    e.indeg = calloc(n, sizeof(int));
    e.queue = calloc(n, sizeof(int));
    e.qbase = calloc(nt + 1, sizeof(int));
    e.qhead = calloc(nt, sizeof(int));
    e.qtail = calloc(nt, sizeof(int));
    e.running = malloc((size_t)e.nworkers * sizeof(int));
    e.start = calloc((size_t)e.nworkers, sizeof(double));
    e.finish = calloc((size_t)e.nworkers, sizeof(double));
    e.succ_types = calloc(n, sizeof(int));
    e.succ_indeg = calloc(n, sizeof(double));
    e.list_buf[0] = calloc(nt, sizeof(int));
    e.list_buf[1] = calloc(nt, sizeof(int));
    if (!e.indeg || !e.queue || !e.qbase || !e.qhead || !e.qtail || !e.running || !e.start || !e.finish ||
        !e.succ_types || !e.succ_indeg || !e.list_buf[0] || !e.list_buf[1]) {
        emu_free(&e);
        snprintf(err, err_size, "out of memory");
        return -ENOMEM;
    }
    for (int t = 0; t < g->ntasks; t++) {
        e.indeg[t] = g->pred_start[t + 1] - g->pred_start[t];
        e.qbase[g->type[t] + 1]++;
    }
    for (size_t i = 0; i < nt; i++)
        e.qbase[i + 1] += e.qbase[i];
    for (int w = 0; w < e.nworkers; w++)
        e.running[w] = -1;
    if (conf->autoprio) {
        e.ap = dahl_autoprio_create(conf->heuristic, NULL, conf->interval);
        if (e.ap == NULL) {
            emu_free(&e);
            snprintf(err, err_size, "out of memory");
            return -ENOMEM;
        }
        /* Types are known up front here (their costs are the perf models); the tracker learns the rest. */
        for (int i = 0; i < g->ntypes; i++) {
            bool runs[DAHL_NARCH] = {g->cost[i][0] > 0.0 && conf->cpus > 0, g->cost[i][1] > 0.0 && conf->gpus > 0};
            dahl_autoprio_declare(e.ap, i, runs, g->cost[i]);
        }
    } else {
        e.prio = *prio;
    }
    for (int t = 0; t < g->ntasks; t++)
        if (e.indeg[t] == 0)
            emu_push(&e, t, 0.0);
    double now = 0.0;
    int done = 0, nrunning = 0;
    while (done < g->ntasks) {
        for (int w = 0; w < e.nworkers; w++) {
            if (e.running[w] >= 0)
                continue;
            int t = emu_pick(&e, w);
            if (t < 0)
                continue;
            e.running[w] = t;
            e.start[w] = now;
            e.finish[w] = now + dahlsim_dag_task_cost(g, t, worker_arch(&e, w));
            nrunning++;
        }
        if (nrunning == 0) {
            int stuck = -1;
            for (int t = 0; t < g->ntasks && stuck < 0; t++)
                if (e.indeg[t] == 0 && e.qhead[g->type[t]] < e.qtail[g->type[t]])
                    stuck = t;
            snprintf(err, err_size,
                     "no worker can run the ready task %d (type \"%s\"): its type is on no list of an architecture "
                     "that has workers",
                     stuck, stuck >= 0 ? g->names[g->type[stuck]] : "?");
            emu_free(&e);
            return -EINVAL;
        }
        double next = INFINITY;
        for (int w = 0; w < e.nworkers; w++)
            if (e.running[w] >= 0 && e.finish[w] < next)
                next = e.finish[w];
        now = next;
        for (int w = 0; w < e.nworkers; w++) {
            if (e.running[w] < 0 || e.finish[w] != now)
                continue;
            int t = e.running[w], a = worker_arch(&e, w);
            e.running[w] = -1;
            nrunning--;
            done++;
            res->tasks_on[a]++;
            e.busy_done[a] += now - e.start[w];
            if (conf->task_end_s != NULL)
                conf->task_end_s[t] = now;
            if (e.ap != NULL)
                dahl_autoprio_executed(e.ap, g->type[t], a, now - e.start[w]);
            for (int k = g->succ_start[t]; k < g->succ_start[t + 1]; k++) {
                int s = g->succ[k];
                if (--e.indeg[s] == 0)
                    emu_push(&e, s, now);
            }
        }
    }
    res->makespan_s = now;
    res->busy_s[0] = e.busy_done[0];
    res->busy_s[1] = e.busy_done[1];
    res->last = e.prio;
    emu_free(&e);
    return 0;
}
