/* Random lab graphs (see dahlsim_dag.h) after the AutoHeteroprio paper's protocol: types with costs and
 * proportions, a predecessor matrix, and tasks laid out by filling a pipeline of workers, so the pipeline is
 * a known schedule without idle time. Same configuration, same graph. */
#include "dahlsim_dag.h"
#include "dahlsim_lab_internal.h"

#include "dahl_array.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int dahlsim_dag_generate(const struct dahlsim_dag_gen_conf *conf, struct dahlsim_dag *g, char *err,
                         size_t err_size)
{
    if (conf->ntasks < 1 || conf->min_types < 1 || conf->max_types < conf->min_types ||
        conf->max_types > DAHLSIM_DAG_MAX_TYPES || conf->max_cpus < 1 || conf->max_gpus < 1) {
        snprintf(err, err_size, "generator: expected tasks >= 1, 1 <= min types <= max types <= %d, workers >= 1",
                 DAHLSIM_DAG_MAX_TYPES);
        return -EINVAL;
    }
    uint64_t st = conf->seed;
    int nt = conf->min_types + (int)rng_below(&st, (uint64_t)(conf->max_types - conf->min_types + 1));
    int cpus = 1 + (int)rng_below(&st, (uint64_t)conf->max_cpus);
    int gpus = 1 + (int)rng_below(&st, (uint64_t)conf->max_gpus);
    /* Types: CPU cost log-uniform in [1, 100] s; a graph-wide share of "close" types whose GPU cost is within
     * 20 % of the CPU's (the paper's Table 2 splits tasks this way); the others 1.2x to 20x faster or slower
     * on the GPU, log-uniformly. */
    double close_share = rng_unit(&st) * 0.7;
    char names[DAHLSIM_DAG_MAX_TYPES][16];
    const char *name_ptr[DAHLSIM_DAG_MAX_TYPES];
    double cost[DAHLSIM_DAG_MAX_TYPES][DAHL_NARCH], weight[DAHLSIM_DAG_MAX_TYPES], wsum = 0.0;
    double P[DAHLSIM_DAG_MAX_TYPES][DAHLSIM_DAG_MAX_TYPES];
    for (int i = 0; i < nt; i++) {
        snprintf(names[i], sizeof(names[i]), "T%d", i);
        name_ptr[i] = names[i];
        cost[i][DAHL_ARCH_CPU] = exp(rng_unit(&st) * log(100.0));
        double f;
        if (rng_unit(&st) < close_share) {
            f = exp((2.0 * rng_unit(&st) - 1.0) * log(1.2));
        } else {
            f = exp(log(1.2) + rng_unit(&st) * (log(20.0) - log(1.2)));
            if (rng_unit(&st) < 0.5)
                f = 1.0 / f;
        }
        cost[i][DAHL_ARCH_GPU] = cost[i][DAHL_ARCH_CPU] * f;
        weight[i] = 0.1 + rng_unit(&st);
        wsum += weight[i];
    }
    /* Predecessor matrix: about half the pairs of types are linked, with a mean of 0 to 2.5 predecessors. */
    for (int i = 0; i < nt; i++)
        for (int j = 0; j < nt; j++)
            P[i][j] = rng_unit(&st) < 0.5 ? 2.5 * rng_unit(&st) : 0.0;
    int n = conf->ntasks;
    int *type = calloc((size_t)n, sizeof(int)), *pstart = calloc((size_t)n + 1, sizeof(int));
    size_t cap = 4 * (size_t)n + 16;
    int nedges = 0;
    int *pred = malloc(cap * sizeof(int));
    double *finish = calloc((size_t)n, sizeof(double));
    int *by_type = malloc((size_t)n * sizeof(int)), *by_type_n = calloc((size_t)nt, sizeof(int));
    int *by_type_base = calloc((size_t)nt + 1, sizeof(int));
    double *avail = calloc((size_t)(cpus + gpus), sizeof(double));
    if (!type || !pstart || !pred || !finish || !by_type || !by_type_n || !by_type_base || !avail) {
        free(type), free(pstart), free(pred), free(finish), free(by_type), free(by_type_n), free(by_type_base),
            free(avail);
        snprintf(err, err_size, "out of memory");
        return -ENOMEM;
    }
    /* Task types first (so per-type lists can be laid out), then the pipeline. */
    for (int t = 0; t < n; t++) {
        double u = rng_unit(&st) * wsum, acc = 0.0;
        int i = 0;
        for (; i < nt - 1; i++) {
            acc += weight[i];
            if (u < acc)
                break;
        }
        type[t] = i;
        by_type_base[i + 1]++;
    }
    for (int i = 0; i < nt; i++)
        by_type_base[i + 1] += by_type_base[i];
    double makespan = 0.0;
    for (int t = 0; t < n; t++) {
        int i = type[t];
        int arch = cost[i][DAHL_ARCH_GPU] < cost[i][DAHL_ARCH_CPU] ? DAHL_ARCH_GPU : DAHL_ARCH_CPU;
        int w0 = arch == DAHL_ARCH_CPU ? 0 : cpus, w1 = arch == DAHL_ARCH_CPU ? cpus : cpus + gpus, w = w0;
        for (int k = w0; k < w1; k++)
            if (avail[k] < avail[w])
                w = k;
        double start = avail[w];
        pstart[t] = nedges;
        for (int j = 0; j < nt; j++) {
            int want = (int)P[i][j] + (rng_unit(&st) < P[i][j] - floor(P[i][j]) ? 1 : 0);
            /* Candidates: the most recent (up to 32) type-j tasks already finished at start, so that the
             * pipeline schedule stays valid and the graph has depth. */
            int cand[32], nc = 0;
            for (int k = by_type_n[j] - 1; k >= 0 && nc < 32; k--) {
                int p = by_type[by_type_base[j] + k];
                if (finish[p] <= start)
                    cand[nc++] = p;
            }
            for (int k = 0; k < want && nc > 0; k++) {
                int pick = (int)rng_below(&st, (uint64_t)nc);
                int *grown = dahl_array_grow(pred, &cap, (size_t)nedges + 1, sizeof(int));
                if (grown == NULL) {
                    free(type), free(pstart), free(pred), free(finish), free(by_type), free(by_type_n),
                        free(by_type_base), free(avail);
                    snprintf(err, err_size, "out of memory");
                    return -ENOMEM;
                }
                pred = grown;
                pred[nedges++] = cand[pick];
                cand[pick] = cand[--nc];
            }
        }
        /* Predecessors in ascending order: the file lists them so. */
        qsort(pred + pstart[t], (size_t)(nedges - pstart[t]), sizeof(int), cmp_int);
        finish[t] = start + cost[i][arch];
        avail[w] = finish[t];
        if (finish[t] > makespan)
            makespan = finish[t];
        by_type[by_type_base[i] + by_type_n[i]++] = t;
    }
    pstart[n] = nedges;
    int ret = dahlsim_dag_init(g, nt, name_ptr, (const double(*)[DAHL_NARCH])cost, n, type, pstart, pred, err,
                               err_size);
    if (ret == 0) {
        g->cpus = cpus;
        g->gpus = gpus;
        g->pipeline_s = makespan;
    }
    free(type), free(pstart), free(pred), free(finish), free(by_type), free(by_type_n), free(by_type_base),
        free(avail);
    return ret;
}
