/* "workloads" and the job-order keys of a scenario (see dahlsim_workloads.h): strict parsing, each job's
 * defaults from the scenario's own keys, the explicit sequence of "given", and the check that the GPU memory
 * limit holds the largest single task of every job. */
#include "dahlsim_workloads.h"
#include "dahlsim_fs.h"
#include "dahlsim_util.h"

#include "dahl_kernels.h"
#include "dahl_perfnames.h"
#include "dahl_dataset_name.h"
#include "dahl_netdesc.h"
#include "dahlsim_dag.h"
#include "dahlsim_share.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const ga_keys[] = {"population", "select", "generations", "patience", "mutation", "seed"};
static const char *const job_keys[] = {"name", "model", "dataset", "batch", "samples", "iterations", "start_s",
                                       "priority"};
static const char *const orders[] = {"round-robin", "fifo", "weight", "ga", "given"};

/* One-line error: FILE: [sweep point (P): ]"FIELD": expected E[, got G]. */
static void wl_error(const char *path, const char *point, const char *field, const cJSON *got, const char *expected)
{
    char *text = got != NULL ? cJSON_PrintUnformatted(got) : NULL;
    dahlsim_error("%s: %s%s%s\"%s\": expected %s%s%s", path, point[0] ? "sweep point (" : "", point,
                  point[0] ? "): " : "", field, expected, text != NULL ? ", got " : "", text != NULL ? text : "");
    free(text);
}

/* A job's image shape from its dataset name; false when it names none. */
static bool job_shape(const struct dahlsim_job *j, int *c, int *h, int *w)
{
    struct dahl_dataset_name n;
    *c = 1, *h = 28, *w = 28;
    if (!dahl_dataset_name_parse(j->dataset, &n))
        return false;
    *c = n.c, *h = n.h, *w = n.w;
    return true;
}

/* What a GPU must hold beside a task's data: StarPU serves small buffers from chunks of 1/16 of a GPU under
 * 512 MiB (malloc.c with scripts/patches/starpu-gpu-memory-limit.patch), and one chunk can stay held by
 * buffers it cannot evict. Measured: one 128x128x3 LeNet job (13.2 MiB task) runs at 16 MiB, not at 15. */
static int64_t gpu_bytes_needed(int64_t largest_task)
{
    return largest_task + largest_task / 16 + 1048576;
}

/* The largest data one task of job j's step touches, in bytes (tensors are split per sample, so a task
 * touches one sample's activations; the REDUX reduction of a gradient touches it and one worker's
 * contribution); false when the job's model cannot be built for its images. */
static bool job_largest_task(const struct dahlsim_job *j, int64_t *bytes)
{
    struct dahl_network_desc d;
    struct dahl_layer_shape s[DAHL_NETWORK_MAX_LAYERS];
    struct dahlsim_dag_export_conf conf = {.model = j->model};
    char err[256];
    if (!job_shape(j, &conf.c, &conf.h, &conf.w) || dahlsim_dag_export_desc(&conf, &d, err, sizeof(err)) != 0 ||
        dahl_network_desc_shapes(&d, s, err, sizeof(err)) != 0)
        return false;
    int64_t largest = 0;
    for (int i = 0; i < d.nlayers; i++) {
        int64_t in = (int64_t)s[i].in_c * s[i].in_h * s[i].in_w, out = (int64_t)s[i].out_c * s[i].out_h * s[i].out_w;
        int64_t nw = (int64_t)s[i].nw, nb = (int64_t)s[i].nb;
        int k = dahl_update_chunks((size_t)nw, 0);
        int64_t chunk = k > 1 ? (int64_t)dahl_update_chunk_elems((size_t)nw, k, 0) : nw;
        int64_t ws = s[i].desc.kind == DAHL_LAYER_CONV ? (int64_t)dahl_conv2d_workspace_bytes(&s[i].conv) / 4 : 0;
        int64_t tasks[] = {in + out + nw + nb + ws, /* forward: x, w, b -> y */
                           out + in + nw + ws,      /* backward input: dy, w -> dx */
                           in + out + nw + nb + ws, /* backward weights: x, dy -> dw, db */
                           2 * (nw + nb),           /* gradient reduction: dw, one worker's dw */
                           3 * chunk};              /* update: p, g, v */
        for (size_t t = 0; t < sizeof(tasks) / sizeof(tasks[0]); t++)
            largest = tasks[t] > largest ? tasks[t] : largest;
    }
    *bytes = 4 * largest; /* floats */
    return true;
}

/* Job i from its object (keys left out: the scenario's). */
static bool job_from(const char *path, const char *point, const char *dir, const cJSON *jo, int i,
                     const struct dahlsim_experiment *x, struct dahlsim_job *j)
{
    char field[64];
    const cJSON *item;
    cJSON_ArrayForEach(item, jo) {
        bool known = false;
        for (size_t k = 0; k < sizeof(job_keys) / sizeof(job_keys[0]); k++)
            known = known || strcmp(item->string, job_keys[k]) == 0;
        if (!known) {
            snprintf(field, sizeof(field), "workloads[%d].%s", i, item->string);
            wl_error(path, point, field, NULL,
                     "no such key (a job has name, model, dataset, batch, samples or iterations, start_s, priority)");
            return false;
        }
    }
    *j = (struct dahlsim_job){.batch = x->batch, .samples = x->samples};
    snprintf(j->name, sizeof(j->name), "job%d", i);
    snprintf(j->model, sizeof(j->model), "%.255s", x->model);
    snprintf(j->dataset, sizeof(j->dataset), "%s", x->dataset);
    struct {
        const char *key;
        char *out;
        size_t size;
    } strings[] = {{"name", j->name, sizeof(j->name)}, {"model", j->model, sizeof(j->model)},
                   {"dataset", j->dataset, sizeof(j->dataset)}};
    for (size_t k = 0; k < 3; k++) {
        item = cJSON_GetObjectItemCaseSensitive(jo, strings[k].key);
        snprintf(field, sizeof(field), "workloads[%d].%s", i, strings[k].key);
        if (item == NULL)
            continue;
        if (!cJSON_IsString(item) || item->valuestring[0] == '\0' || strlen(item->valuestring) >= strings[k].size) {
            wl_error(path, point, field, item, "a non-empty string");
            return false;
        }
        snprintf(strings[k].out, strings[k].size, "%s", item->valuestring);
    }
    (void)dir;
    struct {
        const char *key;
        double min, max;
    } numbers[] = {{"batch", 1, 65536}, {"samples", 1, 100000000}, {"iterations", 1, 100000000},
                   {"start_s", 0, 1e9}, {"priority", -1e9, 1e9}};
    double v[5] = {(double)j->batch, (double)j->samples, 0, 0, 0};
    for (size_t k = 0; k < 5; k++) {
        item = cJSON_GetObjectItemCaseSensitive(jo, numbers[k].key);
        if (item == NULL)
            continue;
        snprintf(field, sizeof(field), "workloads[%d].%s", i, numbers[k].key);
        bool integer = k != 3;
        if (!cJSON_IsNumber(item) || !(item->valuedouble >= numbers[k].min && item->valuedouble <= numbers[k].max) ||
            (integer && item->valuedouble != floor(item->valuedouble))) {
            char expected[80];
            snprintf(expected, sizeof(expected), "%s in [%g, %g]", integer ? "an integer" : "a number", numbers[k].min,
                     numbers[k].max);
            wl_error(path, point, field, item, expected);
            return false;
        }
        v[k] = item->valuedouble;
    }
    j->batch = (long)v[0];
    j->samples = v[2] > 0 ? (long)v[2] * j->batch : (long)v[1];
    j->start_s = v[3];
    j->priority = (long)v[4];
    int64_t largest;
    snprintf(field, sizeof(field), "workloads[%d]", i);
    if (!job_largest_task(j, &largest)) {
        wl_error(path, point, field, jo, "a model of lenet, deep or deep:N (1-9 blocks) for a dataset of "
                                         "fashion-mnist or synthetic:HxWxC");
        return false;
    }
    if (dahl_dataset_name_is_fashion_mnist(j->dataset) && j->samples > 60000) {
        wl_error(path, point, field, jo, "at most the 60000 training samples of fashion-mnist");
        return false;
    }
    if (j->batch > j->samples) {
        wl_error(path, point, field, jo, "a batch of at most its samples");
        return false;
    }
    return true;
}

/* "job_sequence": names or indices, inline or in a file; into x->sequence. */
static bool sequence_from(const char *path, const char *point, const char *dir, const cJSON *o,
                          struct dahlsim_experiment *x)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(o, "job_sequence");
    cJSON *loaded = NULL;
    char file[PATH_MAX + 8];
    const char *where = "job_sequence";
    if (cJSON_IsString(item)) {
        snprintf(file, sizeof(file), "%s%s%s", item->valuestring[0] == '/' ? "" : dir,
                 item->valuestring[0] == '/' ? "" : "/", item->valuestring);
        char why[256];
        if (dahlsim_json_load(file, 1 << 22, &loaded, why, sizeof(why)) != 0) {
            dahlsim_error("%s: \"job_sequence\": %s", path, why);
            return false;
        }
        item = cJSON_GetObjectItemCaseSensitive(loaded, "sequence");
        where = file;
    }
    bool ok = cJSON_IsArray(item) && cJSON_GetArraySize(item) <= DAHLSIM_MAX_SEQUENCE;
    const cJSON *e, *list = ok ? item : NULL;
    x->nsequence = 0;
    cJSON_ArrayForEach(e, list) {
        int job = -1;
        for (int i = 0; i < x->njobs && cJSON_IsString(e); i++)
            job = strcmp(e->valuestring, x->jobs[i].name) == 0 ? i : job;
        if (cJSON_IsNumber(e) && e->valuedouble == floor(e->valuedouble) && e->valuedouble >= 0 &&
            e->valuedouble < (double)x->njobs)
            job = (int)e->valuedouble;
        if (job < 0) {
            ok = false;
            break;
        }
        x->sequence[x->nsequence++] = job;
    }
    if (!ok) {
        char expected[160];
        snprintf(expected, sizeof(expected), "a list of at most %d job names or indices (or a file holding "
                 "{\"sequence\": [...]}) naming the %ld jobs", DAHLSIM_MAX_SEQUENCE, x->njobs);
        wl_error(path, point, where, cJSON_IsString(cJSON_GetObjectItemCaseSensitive(o, "job_sequence")) ? NULL : item,
                 expected);
    }
    cJSON_Delete(loaded);
    return ok;
}

/* Each job as many times in the sequence as it has steps. */
static bool sequence_counts(const char *path, const char *point, struct dahlsim_experiment *x)
{
    for (int i = 0; i < x->njobs; i++) {
        long n = 0, steps = x->jobs[i].samples / x->jobs[i].batch * x->epochs;
        for (long k = 0; k < x->nsequence; k++)
            n += x->sequence[k] == i;
        if (n != steps) {
            char expected[160];
            snprintf(expected, sizeof(expected), "job \"%s\" %ld times (its steps), found %ld", x->jobs[i].name, steps,
                     n);
            wl_error(path, point, "job_sequence", NULL, expected);
            return false;
        }
    }
    return true;
}

/* The GPU memory limit against the largest task of each of the n jobs: below it StarPU's memory manager
 * cannot make room and the run would never end. */
static bool memory_fits(const char *path, const char *point, const struct dahlsim_experiment *x,
                        const struct dahlsim_job *jobs, int n, bool named)
{
    if (x->gpu_memory_mib <= 0 || x->gpus == 0)
        return true;
    for (int i = 0; i < n; i++) {
        int64_t largest = 0;
        if (!job_largest_task(&jobs[i], &largest))
            continue;
        int64_t need = gpu_bytes_needed(largest);
        if (need > (int64_t)x->gpu_memory_mib * 1048576) {
            char expected[240];
            snprintf(expected, sizeof(expected),
                     "at least %lld MiB (the %.1f MiB one task of %s%s%s touches, with room for StarPU's "
                     "allocator), got %ld",
                     (long long)((need + 1048575) / 1048576), (double)largest / 1048576.0, named ? "job \"" : "",
                     named ? jobs[i].name : "the model", named ? "\"" : "", x->gpu_memory_mib);
            wl_error(path, point, "gpu_memory_mib", NULL, expected);
            return false;
        }
    }
    return true;
}

/* "ga": the genetic search's settings, defaults from the lab. */
static bool ga_from(const char *path, const char *point, const cJSON *o, struct dahlsim_share_ga_conf *ga)
{
    dahlsim_share_ga_defaults(ga);
    ga->seed = 1;
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(o, "ga");
    if (g == NULL)
        return true;
    if (!cJSON_IsObject(g)) {
        wl_error(path, point, "ga", g, "an object of population, select, generations, patience, mutation, seed");
        return false;
    }
    const cJSON *item;
    cJSON_ArrayForEach(item, g) {
        bool known = false;
        for (size_t k = 0; k < sizeof(ga_keys) / sizeof(ga_keys[0]); k++)
            known = known || strcmp(item->string, ga_keys[k]) == 0;
        double v = cJSON_IsNumber(item) ? item->valuedouble : NAN;
        bool integer = strcmp(item->string, "mutation") != 0;
        double min = strcmp(item->string, "population") == 0 ? 2 : strcmp(item->string, "seed") == 0 ? 0 : integer;
        double max = integer ? 100000 : 1;
        char field[48];
        snprintf(field, sizeof(field), "ga.%s", item->string);
        if (!known) {
            wl_error(path, point, field, NULL,
                     "no such key (ga has population, select, generations, patience, mutation, seed)");
            return false;
        }
        if (!(v >= min && v <= max) || (integer && v != floor(v))) {
            char expected[96];
            snprintf(expected, sizeof(expected), "%s in [%g, %g]", integer ? "an integer" : "a number", min, max);
            wl_error(path, point, field, item, expected);
            return false;
        }
        if (strcmp(item->string, "population") == 0)
            ga->population = (int)v;
        else if (strcmp(item->string, "select") == 0)
            ga->select = (int)v;
        else if (strcmp(item->string, "generations") == 0)
            ga->generations = (int)v;
        else if (strcmp(item->string, "patience") == 0)
            ga->patience = (int)v;
        else if (strcmp(item->string, "mutation") == 0)
            ga->mutation = v;
        else
            ga->seed = (uint64_t)v;
    }
    if (cJSON_GetObjectItemCaseSensitive(g, "select") == NULL)
        ga->select = ga->population / 4 > 0 ? ga->population / 4 : 1;
    if (ga->select > ga->population) {
        wl_error(path, point, "ga.select", cJSON_GetObjectItemCaseSensitive(g, "select"), "at most the population");
        return false;
    }
    return true;
}

int dahlsim_workloads_share(const struct dahlsim_experiment *x, struct dahlsim_share *s, char *err, size_t err_size)
{
    *s = (struct dahlsim_share){0};
    int ret = dahlsim_share_platform_link(x->machine_dir, x->machine, &s->bandwidth_bytes_per_s, &s->latency_s, err,
                                          err_size);
    enum dahl_perfmodel_kind kind = DAHL_PERFMODEL_HISTORY;
    dahl_perfmodel_kind_parse(x->perfmodel, &kind);
    struct dahlsim_share_export_conf conf = {.machine_dir = x->machine_dir, .machine = x->machine,
                                             .momentum = x->momentum > 0, .perfmodel = (int)kind};
    uint64_t total = 0;
    for (int i = 0; ret == 0 && i < x->njobs; i++) {
        const struct dahlsim_job *j = &x->jobs[i];
        int c, h, w;
        job_shape(j, &c, &h, &w); /* checked when the job was read */
        struct dahlsim_share_export_job job = {.name = j->name, .model = j->model, .c = c, .h = h, .w = w,
                                               .batch = (int)j->batch,
                                               .steps = (int)(j->samples / j->batch * x->epochs),
                                               .start_s = j->start_s, .priority = (int)j->priority};
        ret = dahlsim_share_export_job(&conf, &job, s, err, err_size);
        if (ret == 0)
            total += dahlsim_share_job_bytes(&s->jobs[i]);
    }
    s->memory_bytes = x->gpu_memory_mib > 0 ? (uint64_t)x->gpu_memory_mib << 20 : total;
    if (ret != 0)
        dahlsim_share_fini(s);
    return ret;
}

/* "ga": the lab's genetic search over the jobs' orders, emulated with StarPU's eviction; its best order
 * becomes the sequence the program runs. */
static bool ga_order(const char *path, const char *point, const struct dahlsim_share_ga_conf *ga,
                     struct dahlsim_experiment *x)
{
    struct dahlsim_share s;
    char err[PATH_MAX + 256];
    int ret = dahlsim_workloads_share(x, &s, err, sizeof(err));
    struct dahlsim_share_result best = {0};
    struct dahlsim_share_ga_stats stats;
    struct dahlsim_share_conf conf = {.policy = DAHLSIM_SHARE_STARPU, .prefetch = x->prefetch,
                                      .window = (int)x->job_window};
    if (ret == 0)
        ret = dahlsim_share_ga(&s, &conf, ga, &best, &stats, err, sizeof(err));
    if (ret == 0 && best.norder > DAHLSIM_MAX_SEQUENCE) {
        snprintf(err, sizeof(err), "%d job-steps, at most %d", best.norder, DAHLSIM_MAX_SEQUENCE);
        ret = -EINVAL;
    }
    if (ret != 0) {
        dahlsim_error("%s: %s\"job_order\": ga: %s", path, point, err);
    } else {
        x->nsequence = best.norder;
        memcpy(x->sequence, best.order, (size_t)best.norder * sizeof(int));
    }
    dahlsim_share_result_fini(&best);
    dahlsim_share_fini(&s);
    return ret == 0;
}

bool dahlsim_workloads_from(const char *path, const char *point, const char *scenario_dir, const cJSON *o,
                            struct dahlsim_experiment *x)
{
    const cJSON *wl = cJSON_GetObjectItemCaseSensitive(o, "workloads");
    if (wl == NULL) {
        static const char *const only[] = {"job_order", "job_window", "job_sequence", "ga", "job_count",
                                           "job_contexts"};
        for (size_t k = 0; k < sizeof(only) / sizeof(only[0]); k++)
            if (cJSON_GetObjectItemCaseSensitive(o, only[k]) != NULL) {
                wl_error(path, point, only[k], NULL, "\"workloads\" too (it orders several jobs)");
                return false;
            }
        struct dahlsim_job alone = {.batch = x->batch, .samples = x->samples};
        snprintf(alone.model, sizeof(alone.model), "%.255s", x->model);
        snprintf(alone.dataset, sizeof(alone.dataset), "%s", x->dataset);
        return memory_fits(path, point, x, &alone, 1, false);
    }
    if (!cJSON_IsArray(wl) || cJSON_GetArraySize(wl) < 1 || cJSON_GetArraySize(wl) > DAHLSIM_MAX_JOBS) {
        char expected[80];
        snprintf(expected, sizeof(expected), "a list of 1 to %d job objects", DAHLSIM_MAX_JOBS);
        wl_error(path, point, "workloads", wl, expected);
        return false;
    }
    if (x->nodes > 0 || x->trace) {
        wl_error(path, point, "workloads", NULL, x->nodes > 0 ? "no \"nodes\" (jobs share one node)"
                                                              : "no \"trace\" (not traced yet)");
        return false;
    }
    const cJSON *jo;
    x->njobs = 0;
    cJSON_ArrayForEach(jo, wl) {
        int i = (int)x->njobs;
        if (!cJSON_IsObject(jo)) {
            char field[32];
            snprintf(field, sizeof(field), "workloads[%d]", i);
            wl_error(path, point, field, jo, "a job object");
            return false;
        }
        if (!job_from(path, point, scenario_dir, jo, i, x, &x->jobs[i]))
            return false;
        for (int k = 0; k < i; k++)
            if (strcmp(x->jobs[k].name, x->jobs[i].name) == 0) {
                wl_error(path, point, "workloads", NULL, "jobs of distinct names");
                return false;
            }
        x->njobs++;
    }
    const cJSON *count = cJSON_GetObjectItemCaseSensitive(o, "job_count");
    if (count != NULL) {
        if (!cJSON_IsNumber(count) || count->valuedouble != floor(count->valuedouble) || count->valuedouble < 1 ||
            count->valuedouble > (double)x->njobs) {
            char expected[96];
            snprintf(expected, sizeof(expected), "an integer in [1, %ld] (how many of the workloads run)", x->njobs);
            wl_error(path, point, "job_count", count, expected);
            return false;
        }
        x->njobs = (long)count->valuedouble;
    }
    const cJSON *order = cJSON_GetObjectItemCaseSensitive(o, "job_order");
    snprintf(x->job_order, sizeof(x->job_order), "round-robin");
    if (order != NULL) {
        bool known = false;
        for (size_t k = 0; cJSON_IsString(order) && k < sizeof(orders) / sizeof(orders[0]); k++)
            known = known || strcmp(order->valuestring, orders[k]) == 0;
        if (!known) {
            wl_error(path, point, "job_order", order, "one of round-robin, fifo, weight, ga, given");
            return false;
        }
        snprintf(x->job_order, sizeof(x->job_order), "%s", order->valuestring);
    }
    const cJSON *contexts = cJSON_GetObjectItemCaseSensitive(o, "job_contexts");
    snprintf(x->job_contexts, sizeof(x->job_contexts), "shared");
    if (contexts != NULL) {
        if (!cJSON_IsString(contexts) ||
            (strcmp(contexts->valuestring, "shared") != 0 && strcmp(contexts->valuestring, "per-job") != 0)) {
            wl_error(path, point, "job_contexts", contexts, "\"shared\" or \"per-job\"");
            return false;
        }
        snprintf(x->job_contexts, sizeof(x->job_contexts), "%s", contexts->valuestring);
        /* dahl's heteroprio maps its buckets, learnt at run time, in one context (runtime/dahl_sched.c) */
        if (strcmp(x->job_contexts, "per-job") == 0 && strncmp(x->scheduler, "heteroprio", 10) == 0) {
            wl_error(path, point, "job_contexts", contexts, "\"shared\" with heteroprio (its buckets live in one "
                                                            "context)");
            return false;
        }
    }
    const cJSON *window = cJSON_GetObjectItemCaseSensitive(o, "job_window");
    x->job_window = 4;
    if (window != NULL) {
        if (!cJSON_IsNumber(window) || window->valuedouble != floor(window->valuedouble) || window->valuedouble < 1 ||
            window->valuedouble > 100000) {
            wl_error(path, point, "job_window", window, "an integer in [1, 100000]");
            return false;
        }
        x->job_window = (long)window->valuedouble;
    }
    bool given = strcmp(x->job_order, "given") == 0;
    if (given != (cJSON_GetObjectItemCaseSensitive(o, "job_sequence") != NULL)) {
        wl_error(path, point, given ? "job_sequence" : "job_order", NULL,
                 given ? "the sequence \"given\" runs" : "\"given\" with a \"job_sequence\"");
        return false;
    }
    if (given && (!sequence_from(path, point, scenario_dir, o, x) || !sequence_counts(path, point, x)))
        return false;
    struct dahlsim_share_ga_conf ga;
    if (!ga_from(path, point, o, &ga) || !memory_fits(path, point, x, x->jobs, (int)x->njobs, true))
        return false;
    if (cJSON_GetObjectItemCaseSensitive(o, "ga") != NULL && strcmp(x->job_order, "ga") != 0) {
        wl_error(path, point, "ga", NULL, "job_order \"ga\" (its settings)");
        return false;
    }
    return strcmp(x->job_order, "ga") != 0 || ga_order(path, point, &ga, x);
}
