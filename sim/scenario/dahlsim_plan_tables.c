/* `dahlsim plan`'s tables: each node group's predicted step time and energy for every share of a step (from
 * the scheduler lab, or simulated), the machines' watts, and the results files it reads. See dahlsim_plan.h. */
#include "dahlsim_plan.h"
#include "dahlsim_plan_internal.h"

#include "dahlsim_dag.h"
#include "dahlsim_grain.h"
#include "dahlsim_run.h"
#include "dahlsim_fs.h"
#include "dahlsim_util.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int dahlsim_plan_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The watts of host id in a platform's text ("idle:full" of its wattage_per_state); false when absent. */
static bool host_watts(const char *xml, const char *id, double *idle_w, double *full_w)
{
    char key[64];
    snprintf(key, sizeof(key), "<host id=\"%s\"", id);
    const char *h = strstr(xml, key);
    if (h == NULL)
        return false;
    const char *end = strstr(h, "</host>"), *p = strstr(h, "wattage_per_state\" value=\"");
    if (p == NULL || end == NULL || p > end)
        return false;
    return sscanf(p + strlen("wattage_per_state\" value=\""), "%lf:%lf", idle_w, full_w) == 2;
}

/* The machine's idle watts (all its CPU and GPU hosts) and the extra watts of one busy CPU and GPU; the idle
 * watts are < 0 when its platform has no power figures. */
static void machine_watts(const struct dahlsim_experiment *x, const struct dahlsim_node_group *g, double *idle_w,
                          double *cpu_dyn_w, double *gpu_dyn_w)
{
    char path[PATH_MAX + 128], dir[PATH_MAX];
    if (dahlsim_node_group_dir(x, g, dir, sizeof(dir)) != 0)
        dir[0] = '\0';
    snprintf(path, sizeof(path), "%s/sampling/bus/%s.platform.v4.xml", dir, g->machine);
    char *xml = dahlsim_read_text(path, SIZE_MAX);
    double ci, cf, gi = 0, gf = 0;
    *idle_w = -1;
    *cpu_dyn_w = *gpu_dyn_w = 0;
    if (xml != NULL && host_watts(xml, "CPU0", &ci, &cf) && (g->gpus == 0 || host_watts(xml, "CUDA0", &gi, &gf))) {
        *idle_w = (double)g->cpus * ci + (double)g->gpus * gi;
        *cpu_dyn_w = cf - ci;
        *gpu_dyn_w = gf - gi;
    }
    free(xml);
}

/* The group's machine as an experiment of x's network (what the lab's prediction reads). */
void dahlsim_plan_group_experiment(const struct dahlsim_experiment *x, const struct dahlsim_node_group *g,
                             struct dahlsim_experiment *out)
{
    *out = *x;
    dahlsim_experiment_take_group(out, g);
    out->ngroups = 1;
    out->groups[0] = *g;
}

void dahlsim_plan_results(const cJSON *r, double *step_s, double *energy_j)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(r, "makespan_s");
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(r, "iterations");
    const cJSON *times = cJSON_GetObjectItemCaseSensitive(r, "iteration_times_s");
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(r, "energy"), "total_j");
    double steps = cJSON_IsNumber(it) && it->valuedouble > 0 ? it->valuedouble : 1;
    int n = cJSON_GetArraySize(times);
    *step_s = cJSON_IsNumber(m) ? m->valuedouble / steps : NAN;
    double steady[64];
    if (n >= 2 + DAHLSIM_PLAN_STEADY_MIN && n - 2 <= 64) {
        for (int i = 2; i < n; i++)
            steady[i - 2] = cJSON_GetArrayItem(times, i)->valuedouble;
        qsort(steady, (size_t)(n - 2), sizeof(double), dahlsim_plan_cmp_double);
        int k = n - 2;
        *step_s = k % 2 ? steady[k / 2] : (steady[k / 2 - 1] + steady[k / 2]) / 2;
    }
    *energy_j = cJSON_IsNumber(e) ? e->valuedouble / steps : -1;
}

/* The lab's prediction of every share: its step time, and its workers' busy seconds times their extra watts. */
static int table_lab(const struct dahlsim_experiment *xg, struct table *tb, char *err, size_t err_size)
{
    double cpu_w, gpu_w;
    machine_watts(xg, tb->g, &tb->idle_w, &cpu_w, &gpu_w);
    for (long s = 1; s <= xg->batch; s++) {
        long grain = xg->grain < 0 || xg->grain > s ? s : xg->grain;
        double busy[2];
        int ret = dahlsim_grain_step_predict(xg, s, grain, &tb->t[s], busy, err, err_size);
        if (ret != 0)
            return ret;
        tb->dyn_j[s] = busy[0] * cpu_w + busy[1] * gpu_w;
    }
    return 0;
}

/* The shares the simulator measures (the others are interpolated): 1, 2, 3, then about 1.5 times the last,
 * and the batch. */
static long next_share(long s, long batch)
{
    long n = s < 3 ? s + 1 : s + (s + 1) / 2;
    return n > batch || (s < batch && n > batch - s / 4) ? batch : n;
}

/* One node of the group alone, simulated by StarPU-SimGrid for SIM_STEPS steps of s samples (dir/NAME-sS),
 * through the multi-node path as the candidates are (StarPU-MPI over SMPI, one rank): its time per step in
 * the steady state (dahlsim_plan_step_s) and its joules per step (< 0: no power figures). */
#define SIM_STEPS 6
static int simulate_share(const struct dahlsim_experiment *xg, long s, const char *progress, const char *dir,
                          double *step_s, double *joules, char *err, size_t err_size)
{
    struct dahlsim_experiment *one = malloc(sizeof(*one));
    if (one == NULL) {
        snprintf(err, err_size, "out of memory");
        return -ENOMEM;
    }
    *one = *xg;
    one->batch = s;
    one->samples = s * SIM_STEPS;
    one->epochs = 1;
    one->grain = xg->grain < 0 || xg->grain > s ? -1 : xg->grain;
    one->nodes = 1;
    one->ngroups = 1;
    one->groups[0] = xg->groups[0];
    one->groups[0].count = 1;
    one->groups[0].share = s;
    one->trace = false;
    snprintf(one->mpi_progress_core, sizeof(one->mpi_progress_core), "%s", progress);
    snprintf(one->point, sizeof(one->point), "plan: %s, share %ld, progression thread %s", xg->machine, s, progress);
    char out[PATH_MAX + 64], path[PATH_MAX + 96], why[PATH_MAX + 96];
    snprintf(out, sizeof(out), "%s/%s-s%ld%s", dir, xg->machine, s, strcmp(progress, "busy") == 0 ? "" : "-alone");
    int status = dahlsim_run_experiment(one, NULL, out, NULL, true);
    free(one);
    if (status != 0) {
        snprintf(err, err_size, "the simulation of %ld samples a step on %s failed (exit %d, %s)", s, xg->machine,
                 status, out);
        return -EIO;
    }
    snprintf(path, sizeof(path), "%s/results.json", out);
    cJSON *r;
    if (dahlsim_json_load(path, SIZE_MAX, &r, why, sizeof(why)) != 0) {
        snprintf(err, err_size, "%s: %s", path, why);
        return -EIO;
    }
    dahlsim_plan_results(r, step_s, joules);
    cJSON_Delete(r);
    return isfinite(*step_s) ? 0 : -EIO;
}

/* StarPU-SimGrid's verdict on a node of the group alone at a few shares, interpolated in between: its step
 * time, and its joules above idle (the simulated energy less the idle watts over the step). */
static int table_sim_one(const struct dahlsim_experiment *xg, const char *progress, const char *dir, double idle_w,
                         double *t, double *dyn_j, char *err, size_t err_size)
{
    long prev = 0;
    for (long s = 1; prev < xg->batch; s = next_share(s, xg->batch)) {
        double joules;
        int ret = simulate_share(xg, s, progress, dir, &t[s], &joules, err, err_size);
        if (ret != 0)
            return ret;
        dyn_j[s] = joules >= 0 && idle_w >= 0 ? joules - idle_w * t[s] : 0;
        for (long k = prev + 1; k < s; k++) { /* linear in between */
            double f = (double)(k - prev) / (double)(s - prev);
            t[k] = t[prev] + f * (t[s] - t[prev]);
            dyn_j[k] = dyn_j[prev] + f * (dyn_j[s] - dyn_j[prev]);
        }
        prev = s;
    }
    return 0;
}

/* StarPU-SimGrid's tables of the group's machine: in a multi-node candidate each node's StarPU-MPI
 * progression thread has requests pending from the step's start to its end (the receives of the allreduce
 * are posted first), so where it shares the workers' cores ("auto" or "shared") it takes its turns on them
 * all step: the one-node runs charge them all run ("busy"). A group of one node may also run alone, with no
 * request and no turn: its own runs for that ("-alone"). */
static int table_sim(const struct dahlsim_experiment *xg, const char *dir, struct table *tb, char *err,
                     size_t err_size)
{
    double cpu_w, gpu_w;
    machine_watts(xg, tb->g, &tb->idle_w, &cpu_w, &gpu_w);
    bool turns = strcmp(xg->mpi_progress_core, "dedicated") != 0;
    int ret = table_sim_one(xg, turns ? "busy" : xg->mpi_progress_core, dir, tb->idle_w, tb->t, tb->dyn_j, err,
                            err_size);
    if (ret != 0 || !turns || tb->g->count != 1)
        return ret;
    tb->alone_t = calloc((size_t)xg->batch + 1, sizeof(double));
    tb->alone_dyn_j = calloc((size_t)xg->batch + 1, sizeof(double));
    if (tb->alone_t == NULL || tb->alone_dyn_j == NULL) {
        snprintf(err, err_size, "out of memory");
        return -ENOMEM;
    }
    return table_sim_one(xg, xg->mpi_progress_core, dir, tb->idle_w, tb->alone_t, tb->alone_dyn_j, err, err_size);
}

/* The fraction of a step's compute done when the dense layers' gradients are complete (dahlsim_plan.h): the
 * scheduler lab's emulation of one step of share samples on the node's workers (dahlsim_grain_emulate), the
 * last dense_backward_weights task's end over the last task's before the SGD updates. */
static int dense_ready(const struct dahlsim_experiment *xg, long share, double *frac, char *err, size_t err_size)
{
    struct dahlsim_dag dag;
    double *end;
    long grain = xg->grain < 0 || xg->grain > share ? share : xg->grain;
    int ret = dahlsim_grain_emulate(xg, share, grain, 1, &dag, &end, NULL, err, err_size);
    if (ret != 0)
        return ret;
    double dense = 0, last = 0;
    for (int t = 0; t < dag.ntasks; t++) {
        const char *name = dag.names[dag.type[t]];
        if (strstr(name, "sgd_update") != NULL || strstr(name, "dahl_zero") != NULL)
            continue;
        if (end[t] > last)
            last = end[t];
        if (strstr(name, "dense_backward_weights") != NULL && end[t] > dense)
            dense = end[t];
    }
    *frac = last > 0 ? dense / last : 1.0;
    free(end);
    dahlsim_dag_fini(&dag);
    return 0;
}

int dahlsim_plan_table_fill(const struct dahlsim_experiment *x, const struct dahlsim_plan_conf *conf,
                      const struct dahlsim_node_group *g, struct table *tb, char *err, size_t err_size)
{
    long batch = x->batch;
    tb->g = g;
    tb->t = calloc((size_t)batch + 1, sizeof(double));
    tb->dyn_j = calloc((size_t)batch + 1, sizeof(double));
    tb->frac = calloc((size_t)batch + 1, sizeof(double));
    struct dahlsim_experiment *xg = malloc(sizeof(*xg));
    if (tb->t == NULL || tb->dyn_j == NULL || tb->frac == NULL || xg == NULL) {
        free(xg);
        snprintf(err, err_size, "out of memory");
        return -ENOMEM;
    }
    dahlsim_plan_group_experiment(x, g, xg);
    int ret = conf->predictor == DAHLSIM_PLAN_LAB ? table_lab(xg, tb, err, err_size)
                                                  : table_sim(xg, conf->work_dir, tb, err, err_size);
    for (long s = 1; ret == 0 && s <= batch; s++) { /* more samples never finish sooner: a node may idle */
        if (tb->t[s] < tb->t[s - 1])
            tb->t[s] = tb->t[s - 1];
        if (tb->alone_t != NULL && tb->alone_t[s] < tb->alone_t[s - 1])
            tb->alone_t[s] = tb->alone_t[s - 1];
    }
    /* the dense gradients' readiness at the measured shares, linear in between */
    for (long s = 1, prev = 0; ret == 0 && prev < batch; s = next_share(s, batch)) {
        ret = dense_ready(xg, s, &tb->frac[s], err, err_size);
        for (long k = prev + 1; k < s; k++)
            tb->frac[k] = tb->frac[prev] + (double)(k - prev) / (double)(s - prev) * (tb->frac[s] - tb->frac[prev]);
        prev = s;
    }
    free(xg);
    return ret;
}
