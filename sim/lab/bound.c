/* A lower bound of any schedule's makespan on a lab graph (see dahlsim_dag.h): the critical path at best
 * costs, and the fractional area bound of two architectures. */
#include "dahlsim_dag.h"

#include <math.h>
#include <stdlib.h>

/* A task's best cost among the architectures that have workers (INFINITY when none can run it). */
static double best_cost(double c, double x, int cpus, int gpus)
{
    c = cpus > 0 && c > 0.0 ? c : INFINITY;
    x = gpus > 0 && x > 0.0 ? x : INFINITY;
    return c < x ? c : x;
}

/* CPU/GPU cost ratio of an item for the area bound's ordering: items only a CPU runs go first, items only
 * a GPU runs last. */
static double cpu_gpu_ratio(const double c[DAHL_NARCH])
{
    if (c[0] <= 0.0)
        return INFINITY;
    return c[1] > 0.0 ? c[0] / c[1] : 0.0;
}

double dahlsim_dag_lower_bound(const struct dahlsim_dag *g, int cpus, int gpus)
{
    /* Critical path at each task's best cost among the architectures that have workers. */
    double *finish = calloc((size_t)g->ntasks + 1, sizeof(double));
    double cp = 0.0;
    for (int t = 0; finish != NULL && t < g->ntasks; t++) {
        double s = 0.0;
        for (int k = g->pred_start[t]; k < g->pred_start[t + 1]; k++)
            if (finish[g->pred[k]] > s)
                s = finish[g->pred[k]];
        finish[t] = s + best_cost(dahlsim_dag_task_cost(g, t, 0), dahlsim_dag_task_cost(g, t, 1), cpus, gpus);
        if (finish[t] > cp)
            cp = finish[t];
    }
    free(finish);
    /* Area bound: the least T such that the work can be split, fractionally, with at most cpus * T on the CPUs
     * and gpus * T on the GPUs. For a given T, filling the CPUs with the work of lowest CPU/GPU cost ratio
     * first is optimal (exchange argument); T is found by bisection. The items are the types (count tasks of
     * the type's cost), or the tasks themselves when they have costs of their own. */
    int nitems = g->task_cost != NULL ? g->ntasks : g->ntypes;
    int *idx = malloc(((size_t)nitems + 1) * sizeof(int));
    double *count = calloc((size_t)nitems + 1, sizeof(double));
    double(*cost)[DAHL_NARCH] = calloc((size_t)nitems + 1, sizeof(*cost));
    double *ratio = calloc((size_t)nitems + 1, sizeof(double));
    if (idx == NULL || count == NULL || cost == NULL || ratio == NULL) {
        free(idx), free(count), free(cost), free(ratio);
        return cp;
    }
    for (int i = 0; i < nitems; i++) {
        idx[i] = i;
        for (int a = 0; a < DAHL_NARCH; a++)
            cost[i][a] = g->task_cost != NULL ? g->task_cost[i][a] : g->cost[i][a];
        ratio[i] = cpu_gpu_ratio(cost[i]);
    }
    for (int t = 0; t < g->ntasks; t++)
        count[g->task_cost != NULL ? t : g->type[t]] += 1.0;
    /* Insertion sort by ratio (stable: equal ratios keep their order); few items for generated graphs, and
     * exported ones come mostly sorted by type. */
    for (int i = 1; i < nitems; i++) {
        int x = idx[i], j = i;
        while (j > 0 && ratio[idx[j - 1]] > ratio[x]) {
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = x;
    }
    double lo = 0.0, hi = 0.0;
    for (int i = 0; i < nitems; i++)
        hi += count[i] * best_cost(cost[i][0], cost[i][1], cpus, gpus);
    for (int iter = 0; iter < 200 && isfinite(hi); iter++) {
        double T = 0.5 * (lo + hi), cpu_left = cpus * T, gpu_need = 0.0;
        for (int k = 0; k < nitems; k++) {
            int i = idx[k];
            double work = count[i];
            if (cpus > 0 && cost[i][0] > 0.0 && cpu_left > 0.0) {
                double n = cpu_left / cost[i][0];
                if (n > work)
                    n = work;
                cpu_left -= n * cost[i][0];
                work -= n;
            }
            if (work > 0.0)
                gpu_need += gpus > 0 && cost[i][1] > 0.0 ? work * cost[i][1] : INFINITY;
        }
        if (gpu_need <= gpus * T)
            hi = T;
        else
            lo = T;
    }
    free(idx), free(count), free(cost), free(ratio);
    return cp > hi ? cp : hi;
}
