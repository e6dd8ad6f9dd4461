/* "grain": "auto": see dahlsim_grain.h. */
#include "dahlsim_grain.h"

#include "dahl_autoprio.h"
#include "dahl_dataset_name.h"
#include "dahl_perfnames.h"
#include "dahl_records.h" /* DAHL_SUBMIT_SHARED_SHARE */
#include "dahlsim_dag.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STEPS 2                 /* steps per emulated graph: the overlap of one step's end with the next */
#define SIM_TASK_US 1.0         /* StarPU-SimGrid 1.3.10's own cost per task where none is measured */
#define AUTOPRIO_INTERVAL 32    /* as `dahlsim dag run --auto` */

/* x's image shape: synthetic:HxWxC, or fashion-mnist's 28x28x1. Returns 0 or -EINVAL (err). */
static int image_shape(const struct dahlsim_experiment *x, int *c, int *h, int *w, char *err, size_t err_size)
{
    struct dahl_dataset_name n;
    if (!dahl_dataset_name_parse(x->dataset, &n)) {
        snprintf(err, err_size, "dataset \"%s\": expected " DAHL_DATASET_NAMES, x->dataset);
        return -EINVAL;
    }
    *c = n.c, *h = n.h, *w = n.w;
    return 0;
}

int dahlsim_grain_network_desc(const struct dahlsim_experiment *x, struct dahl_network_desc *d, char *err,
                               size_t err_size)
{
    struct dahlsim_dag_export_conf conf = {.machine_dir = x->machine_dir, .machine = x->machine, .model = x->model};
    int ret = image_shape(x, &conf.c, &conf.h, &conf.w, err, err_size);
    return ret != 0 ? ret : dahlsim_dag_export_desc(&conf, d, err, err_size);
}

int dahlsim_grain_emulate(const struct dahlsim_experiment *x, long batch, long g, int steps, struct dahlsim_dag *dag,
                          double **task_end_s, struct dahlsim_emu_result *res, char *err, size_t err_size)
{
    int h, w, c;
    if (image_shape(x, &c, &h, &w, err, err_size) != 0)
        return -EINVAL;
    enum dahl_perfmodel_kind kind;
    if (dahl_perfmodel_kind_parse(x->perfmodel, &kind) != 0) {
        snprintf(err, err_size, "perfmodel \"%s\": unknown", x->perfmodel);
        return -EINVAL;
    }
    int workers = (int)(x->cpus + x->gpus);
    double per_task_us = (x->worker_us >= 0 ? x->worker_us : SIM_TASK_US) + x->sched_push_us;
    struct dahlsim_dag_export_conf conf = {.machine_dir = x->machine_dir,
                                           .machine = x->machine,
                                           .c = c,
                                           .h = h,
                                           .w = w,
                                           .model = x->model,
                                           .batch = (int)batch,
                                           .steps = steps,
                                           .redux_copies = workers < batch ? workers : (int)batch,
                                           .manual = strcmp(x->reduction, "manual") == 0,
                                           .momentum = x->momentum != 0.0,
                                           .perfmodel = (int)kind,
                                           .cpus = (int)x->cpus,
                                           .gpus = (int)x->gpus,
                                           .grain = (int)g,
                                           .per_task_s = per_task_us * 1e-6};
    if (conf.redux_copies < 1)
        conf.redux_copies = 1;
    int ret = dahlsim_dag_export(&conf, dag, err, err_size);
    if (ret != 0)
        return ret;
    double *end = task_end_s != NULL ? calloc((size_t)dag->ntasks, sizeof(double)) : NULL;
    if (task_end_s != NULL && end == NULL) {
        dahlsim_dag_fini(dag);
        snprintf(err, err_size, "out of memory");
        return -ENOMEM;
    }
    /* Schedulers that place tasks by their perf models keep a GPU's tasks off the CPUs unless there are many:
     * StarPU's slow-factor rule. The others hand a task to whichever worker asks. */
    bool by_models = strncmp(x->scheduler, "dm", 2) == 0 || strncmp(x->scheduler, "heteroprio", 10) == 0;
    struct dahlsim_emu_conf emu = {.cpus = (int)x->cpus, .gpus = (int)x->gpus, .slow_factors = by_models,
                                   .autoprio = true, .heuristic = DAHL_AUTOPRIO_PRWS, .interval = AUTOPRIO_INTERVAL,
                                   .task_end_s = end};
    struct dahlsim_emu_result own;
    ret = dahlsim_dag_emulate(dag, &emu, NULL, res != NULL ? res : &own, err, err_size);
    if (ret != 0) {
        free(end);
        dahlsim_dag_fini(dag);
        return ret;
    }
    if (task_end_s != NULL)
        *task_end_s = end;
    return 0;
}

int dahlsim_grain_step_predict(const struct dahlsim_experiment *x, long batch, long g, double *step_s,
                               double busy_s[2], char *err, size_t err_size)
{
    struct dahlsim_dag dag;
    struct dahlsim_emu_result res;
    int ret = dahlsim_grain_emulate(x, batch, g, STEPS, &dag, NULL, &res, err, err_size);
    if (ret != 0)
        return ret;
    /* The submitting thread's floor, as the simulated engine charges it (dahl_engine.c): at a share of a
     * worker's core where the workers hold every core of the platform, or the ranks share their machine with
     * their progression threads; else on a core of its own. */
    long ncpu = 0, ngpu = 0;
    char platform[PATH_MAX + 96];
    bool full = dahlsim_platform_counts(x->machine_dir, x->machine, &ncpu, &ngpu, platform, sizeof(platform)) &&
                x->cpus > 0 && x->cpus + x->gpus >= ncpu;
    bool shared = x->cpus > 0 && x->nodes > 0 && strcmp(x->mpi_progress_core, "shared") == 0;
    double share = full || shared ? DAHL_SUBMIT_SHARED_SHARE : 1.0;
    double submit_s = (double)dag.ntasks * x->submit_us_per_task * 1e-6 / share;
    *step_s = (res.makespan_s > submit_s ? res.makespan_s : submit_s) / STEPS;
    if (busy_s != NULL) {
        busy_s[0] = res.busy_s[DAHL_ARCH_CPU] / STEPS;
        busy_s[1] = res.busy_s[DAHL_ARCH_GPU] / STEPS;
    }
    dahlsim_dag_fini(&dag);
    return 0;
}

int dahlsim_grain_auto(const struct dahlsim_experiment *x, long batch, const long *candidates, int n, long *grain,
                       char *choice, size_t choice_size, char *err, size_t err_size)
{
    double best = 0, one = 0;
    int at = -1;
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
    n = n < 2 ? n : 2; /* the fuzz build (docs/reliability.md): two candidates' emulations, not all */
#endif
    for (int i = 0; i < n; i++) {
        double s;
        int ret = dahlsim_grain_step_predict(x, batch, candidates[i], &s, NULL, err, err_size);
        if (ret != 0)
            return ret;
        if (candidates[i] == 1)
            one = s;
        if (at < 0 || s < best) {
            best = s;
            at = i;
        }
    }
    if (at < 0) {
        snprintf(err, err_size, "no candidate grain");
        return -EINVAL;
    }
    *grain = candidates[at];
    size_t used = (size_t)snprintf(choice, choice_size, "auto: %ld of", *grain);
    for (int i = 0; i < n && used < choice_size; i++)
        used += (size_t)snprintf(choice + used, choice_size - used, "%s %ld", i ? "," : "", candidates[i]);
    if (used < choice_size)
        snprintf(choice + used, choice_size - used, "; predicted step %.6g ms (grain 1: %.6g ms)", best * 1e3,
                 one * 1e3);
    return 0;
}

/* Whether the machine's manifest lists x's setup with tasks over n samples: a "covered" entry of its shape,
 * model and perf-model kind whose "grains" holds n (n == 1, or a manifest without "covered": always). */
bool dahlsim_grain_covered(const cJSON *root, const struct dahlsim_experiment *x, long n)
{
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "covered");
    if (n == 1 || !cJSON_IsArray(list))
        return true;
    char want[64];
    dahl_dataset_name_shape(x->dataset, want, sizeof(want));
    const cJSON *c;
    cJSON_ArrayForEach(c, list)
    {
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(c, "dataset");
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(c, "model");
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(c, "perfmodel");
        char have[64];
        dahl_dataset_name_shape(cJSON_IsString(d) ? d->valuestring : "", have, sizeof(have));
        if (strcmp(have, want) != 0 || !cJSON_IsString(m) || strcmp(m->valuestring, x->model) != 0 ||
            strcmp(cJSON_IsString(k) ? k->valuestring : "history", x->perfmodel) != 0)
            continue;
        const cJSON *g;
        cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(c, "grains"))
        {
            if (cJSON_IsNumber(g) && g->valuedouble == (double)n)
                return true;
        }
    }
    return false;
}

int dahlsim_grain_task_sizes(long grain, long batch, long out[2])
{
    long g = grain < 0 || grain > batch ? batch : grain;
    out[0] = g;
    out[1] = batch % g;
    return out[1] > 0 ? 2 : 1;
}

long dahlsim_grain_uncovered(const cJSON *root, const struct dahlsim_experiment *x, long grain, long batch)
{
    long sizes[2];
    int n = dahlsim_grain_task_sizes(grain, batch, sizes);
    for (int i = 0; i < n; i++)
        if (!dahlsim_grain_covered(root, x, sizes[i]))
            return sizes[i];
    return 0;
}
