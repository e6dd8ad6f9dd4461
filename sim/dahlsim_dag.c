/* The scheduler lab (see dahlsim_dag.h): graphs, the Heteroprio emulator, the generator, the control
 * priorities and the `dahlsim dag` command. Everything here is deterministic: same inputs and seed, same
 * bytes out. */
#include "dahlsim_dag.h"

#include "dahl_codelets.h"
#include "dahl_engine.h"
#include "dahl_random.h"
#include "dahlsim_cli.h"
#include "dahlsim_fs.h"
#include "dahlsim_perfmodel.h"
#include "dahl_stepgraph.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- graphs ---- */

void dahlsim_dag_fini(struct dahlsim_dag *g)
{
    free(g->names);
    free(g->cost);
    free(g->type);
    free(g->pred_start);
    free(g->pred);
    free(g->succ_start);
    free(g->succ);
    free(g->task_cost);
    memset(g, 0, sizeof(*g));
}

int dahlsim_dag_set_task_costs(struct dahlsim_dag *g, const double (*cost)[DAHL_NARCH], char *err, size_t err_size)
{
    for (int t = 0; t < g->ntasks; t++)
        for (int a = 0; a < DAHL_NARCH; a++)
            if ((cost[t][a] > 0.0) != (g->cost[g->type[t]][a] > 0.0) || !isfinite(cost[t][a])) {
                snprintf(err, err_size, "task %d: expected a positive %s cost exactly where its type \"%s\" has one",
                         t, a == DAHL_ARCH_CPU ? "CPU" : "GPU", g->names[g->type[t]]);
                return -EINVAL;
            }
    double(*copy)[DAHL_NARCH] = malloc(((size_t)g->ntasks + 1) * sizeof(*copy));
    if (copy == NULL) {
        snprintf(err, err_size, "out of memory");
        return -ENOMEM;
    }
    memcpy(copy, cost, (size_t)g->ntasks * sizeof(*copy));
    free(g->task_cost);
    g->task_cost = copy;
    return 0;
}

double dahlsim_dag_task_cost(const struct dahlsim_dag *g, int t, int arch)
{
    return g->task_cost != NULL ? g->task_cost[t][arch] : g->cost[g->type[t]][arch];
}

int dahlsim_dag_init(struct dahlsim_dag *g, int ntypes, const char *const *names, const double (*cost)[DAHL_NARCH],
                     int ntasks, const int *type, const int *pred_start, const int *pred, char *err,
                     size_t err_size)
{
    memset(g, 0, sizeof(*g));
    if (ntypes < 1 || ntypes > DAHLSIM_DAG_MAX_TYPES || ntasks < 0) {
        snprintf(err, err_size, "expected 1 to %d task types, got %d", DAHLSIM_DAG_MAX_TYPES, ntypes);
        return -EINVAL;
    }
    int nedges = pred_start[ntasks];
    g->ntypes = ntypes;
    g->ntasks = ntasks;
    g->names = calloc((size_t)ntypes, sizeof(*g->names));
    g->cost = calloc((size_t)ntypes, sizeof(*g->cost));
    g->type = calloc((size_t)ntasks + 1, sizeof(int));
    g->pred_start = calloc((size_t)ntasks + 1, sizeof(int));
    g->pred = calloc((size_t)nedges + 1, sizeof(int));
    g->succ_start = calloc((size_t)ntasks + 2, sizeof(int));
    g->succ = calloc((size_t)nedges + 1, sizeof(int));
    if (!g->names || !g->cost || !g->type || !g->pred_start || !g->pred || !g->succ_start || !g->succ) {
        dahlsim_dag_fini(g);
        snprintf(err, err_size, "out of memory");
        return -ENOMEM;
    }
    for (int i = 0; i < ntypes; i++) {
        snprintf(g->names[i], sizeof(g->names[i]), "%s", names[i]);
        for (int a = 0; a < DAHL_NARCH; a++)
            g->cost[i][a] = cost[i][a] > 0.0 ? cost[i][a] : 0.0;
        if (g->cost[i][0] <= 0.0 && g->cost[i][1] <= 0.0) {
            snprintf(err, err_size, "type \"%s\": expected a positive cost on at least one architecture", names[i]);
            dahlsim_dag_fini(g);
            return -EINVAL;
        }
    }
    for (int t = 0; t < ntasks; t++) {
        if (type[t] < 0 || type[t] >= ntypes) {
            snprintf(err, err_size, "task %d: expected a type in [0, %d], got %d", t, ntypes - 1, type[t]);
            dahlsim_dag_fini(g);
            return -EINVAL;
        }
        g->type[t] = type[t];
        g->pred_start[t] = pred_start[t];
        for (int k = pred_start[t]; k < pred_start[t + 1]; k++) {
            if (pred[k] < 0 || pred[k] >= t) {
                snprintf(err, err_size, "task %d: expected predecessors among tasks 0..%d, got %d", t, t - 1,
                         pred[k]);
                dahlsim_dag_fini(g);
                return -EINVAL;
            }
            g->pred[k] = pred[k];
            g->succ_start[pred[k] + 1]++;
        }
    }
    g->pred_start[ntasks] = nedges;
    for (int t = 0; t < ntasks; t++)
        g->succ_start[t + 1] += g->succ_start[t];
    int *fill = calloc((size_t)ntasks + 1, sizeof(int));
    if (fill == NULL) {
        dahlsim_dag_fini(g);
        snprintf(err, err_size, "out of memory");
        return -ENOMEM;
    }
    /* Successors in ascending task order: predecessors are scanned by ascending task. */
    for (int t = 0; t < ntasks; t++)
        for (int k = g->pred_start[t]; k < g->pred_start[t + 1]; k++) {
            int p = g->pred[k];
            g->succ[g->succ_start[p] + fill[p]++] = t;
        }
    free(fill);
    return 0;
}

static double json_cost(const cJSON *o, const char *key, bool *bad)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (v == NULL || cJSON_IsNull(v))
        return 0.0;
    if (!cJSON_IsNumber(v) || !(v->valuedouble > 0.0) || !isfinite(v->valuedouble))
        *bad = true;
    return v->valuedouble;
}

/* "task_costs": [[cpu_s, gpu_s], ...], null where the task's type cannot run. */
static int load_task_costs(const char *path, const cJSON *list, struct dahlsim_dag *g, char *err, size_t err_size)
{
    if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) != g->ntasks) {
        snprintf(err, err_size, "%s: \"task_costs\": expected an array of %d [cpu_s, gpu_s] pairs (one per task)",
                 path, g->ntasks);
        return -EINVAL;
    }
    double(*cost)[DAHL_NARCH] = calloc((size_t)g->ntasks + 1, sizeof(*cost));
    if (cost == NULL) {
        snprintf(err, err_size, "%s: out of memory", path);
        return -ENOMEM;
    }
    int t = 0;
    const cJSON *pair;
    cJSON_ArrayForEach(pair, list)
    {
        if (!cJSON_IsArray(pair) || cJSON_GetArraySize(pair) != DAHL_NARCH) {
            snprintf(err, err_size, "%s: \"task_costs\"[%d]: expected [cpu_s, gpu_s]", path, t);
            free(cost);
            return -EINVAL;
        }
        for (int a = 0; a < DAHL_NARCH; a++) {
            const cJSON *v = cJSON_GetArrayItem(pair, a);
            if (!cJSON_IsNull(v) && (!cJSON_IsNumber(v) || !(v->valuedouble > 0.0) || !isfinite(v->valuedouble))) {
                snprintf(err, err_size, "%s: \"task_costs\"[%d]: expected positive seconds or null", path, t);
                free(cost);
                return -EINVAL;
            }
            cost[t][a] = cJSON_IsNumber(v) ? v->valuedouble : 0.0;
        }
        t++;
    }
    char why[256];
    int ret = dahlsim_dag_set_task_costs(g, (const double(*)[DAHL_NARCH])cost, why, sizeof(why));
    if (ret != 0)
        snprintf(err, err_size, "%s: \"task_costs\": %s", path, why);
    free(cost);
    return ret;
}

int dahlsim_dag_load(const char *path, struct dahlsim_dag *g, char *err, size_t err_size)
{
    memset(g, 0, sizeof(*g));
    cJSON *doc = dahlsim_read_json(path);
    if (doc == NULL) {
        snprintf(err, err_size, "%s: cannot read or parse the graph (expected a dahlsim-dag-1 JSON file)", path);
        return -EINVAL;
    }
    int ret = -EINVAL;
    const cJSON *types = cJSON_GetObjectItemCaseSensitive(doc, "types");
    const cJSON *tasks = cJSON_GetObjectItemCaseSensitive(doc, "tasks");
    const cJSON *format = cJSON_GetObjectItemCaseSensitive(doc, "format");
    int ntypes = cJSON_GetArraySize(types), ntasks = cJSON_GetArraySize(tasks);
    const char **names = NULL;
    double (*cost)[DAHL_NARCH] = NULL;
    int *type = NULL, *pstart = NULL, *pred = NULL;
    static const char *const known[] = {"format", "cpus", "gpus", "pipeline_makespan_s", "types",
                                        "tasks", "task_costs", "source"};
    const cJSON *key;
    cJSON_ArrayForEach(key, doc)
    {
        bool ok = false;
        for (size_t k = 0; k < sizeof(known) / sizeof(known[0]); k++)
            ok |= key->string != NULL && strcmp(key->string, known[k]) == 0;
        if (!ok) {
            snprintf(err, err_size,
                     "%s: unknown key \"%s\" (expected format, cpus, gpus, pipeline_makespan_s, types, tasks, "
                     "task_costs, source)",
                     path, key->string != NULL ? key->string : "?");
            goto out;
        }
    }
    if (!cJSON_IsString(format) || strcmp(format->valuestring, "dahlsim-dag-1") != 0) {
        snprintf(err, err_size, "%s: \"format\": expected \"dahlsim-dag-1\"", path);
        goto out;
    }
    if (!cJSON_IsArray(types) || ntypes < 1 || ntypes > DAHLSIM_DAG_MAX_TYPES) {
        snprintf(err, err_size, "%s: \"types\": expected an array of 1 to %d types", path, DAHLSIM_DAG_MAX_TYPES);
        goto out;
    }
    if (!cJSON_IsArray(tasks)) {
        snprintf(err, err_size, "%s: \"tasks\": expected an array of [type, predecessors...]", path);
        goto out;
    }
    names = calloc((size_t)ntypes, sizeof(*names));
    cost = calloc((size_t)ntypes, sizeof(*cost));
    type = calloc((size_t)ntasks + 1, sizeof(int));
    pstart = calloc((size_t)ntasks + 1, sizeof(int));
    int nedges = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, tasks) nedges += cJSON_GetArraySize(t) > 0 ? cJSON_GetArraySize(t) - 1 : 0;
    pred = calloc((size_t)nedges + 1, sizeof(int));
    if (!names || !cost || !type || !pstart || !pred) {
        snprintf(err, err_size, "%s: out of memory", path);
        ret = -ENOMEM;
        goto out;
    }
    int i = 0;
    const cJSON *ty;
    cJSON_ArrayForEach(ty, types)
    {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(ty, "name");
        bool bad = false;
        if (!cJSON_IsString(name)) {
            snprintf(err, err_size, "%s: \"types\"[%d].\"name\": expected a string", path, i);
            goto out;
        }
        names[i] = name->valuestring;
        cost[i][DAHL_ARCH_CPU] = json_cost(ty, "cpu_s", &bad);
        cost[i][DAHL_ARCH_GPU] = json_cost(ty, "gpu_s", &bad);
        if (bad) {
            snprintf(err, err_size, "%s: \"types\"[%d] (\"%s\"): \"cpu_s\"/\"gpu_s\": expected positive seconds or null",
                     path, i, names[i]);
            goto out;
        }
        i++;
    }
    int k = 0;
    i = 0;
    cJSON_ArrayForEach(t, tasks)
    {
        if (!cJSON_IsArray(t) || cJSON_GetArraySize(t) < 1) {
            snprintf(err, err_size, "%s: \"tasks\"[%d]: expected [type, predecessors...]", path, i);
            goto out;
        }
        pstart[i] = k;
        int j = 0;
        const cJSON *v;
        cJSON_ArrayForEach(v, t)
        {
            if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble)) {
                snprintf(err, err_size, "%s: \"tasks\"[%d]: expected integers", path, i);
                goto out;
            }
            if (j++ == 0)
                type[i] = v->valueint;
            else
                pred[k++] = v->valueint;
        }
        i++;
    }
    pstart[ntasks] = k;
    char why[256];
    ret = dahlsim_dag_init(g, ntypes, names, (const double(*)[DAHL_NARCH])cost, ntasks, type, pstart, pred, why,
                           sizeof(why));
    if (ret != 0) {
        snprintf(err, err_size, "%s: %s", path, why);
        goto out;
    }
    const cJSON *cpus = cJSON_GetObjectItemCaseSensitive(doc, "cpus");
    const cJSON *gpus = cJSON_GetObjectItemCaseSensitive(doc, "gpus");
    const cJSON *pipe = cJSON_GetObjectItemCaseSensitive(doc, "pipeline_makespan_s");
    g->cpus = cJSON_IsNumber(cpus) ? cpus->valueint : 0;
    g->gpus = cJSON_IsNumber(gpus) ? gpus->valueint : 0;
    g->pipeline_s = cJSON_IsNumber(pipe) ? pipe->valuedouble : 0.0;
    if (g->cpus < 0 || g->gpus < 0) {
        snprintf(err, err_size, "%s: \"cpus\"/\"gpus\": expected non-negative integers", path);
        dahlsim_dag_fini(g);
        ret = -EINVAL;
        goto out;
    }
    const cJSON *source = cJSON_GetObjectItemCaseSensitive(doc, "source");
    if (cJSON_IsString(source))
        snprintf(g->source, sizeof(g->source), "%s", source->valuestring);
    const cJSON *tcosts = cJSON_GetObjectItemCaseSensitive(doc, "task_costs");
    if (tcosts != NULL) {
        ret = load_task_costs(path, tcosts, g, err, err_size);
        if (ret != 0)
            dahlsim_dag_fini(g);
    }
out:
    free(names);
    free(cost);
    free(type);
    free(pstart);
    free(pred);
    cJSON_Delete(doc);
    return ret;
}

int dahlsim_dag_save(const struct dahlsim_dag *g, const char *path, char *err, size_t err_size)
{
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        snprintf(err, err_size, "%s: cannot write: %s", path, strerror(errno));
        return -errno;
    }
    /* Written by hand, one task per line: cJSON would put every number on its own line. %.17g keeps the
     * costs exact through a save and load. */
    fprintf(f, "{\n  \"format\": \"dahlsim-dag-1\",\n");
    if (g->source[0] != '\0')
        fprintf(f, "  \"source\": \"%s\",\n", g->source); /* no quotes or backslashes: the export writes it */
    fprintf(f, "  \"cpus\": %d,\n  \"gpus\": %d,\n  \"pipeline_makespan_s\": %.17g,\n  \"types\": [\n", g->cpus,
            g->gpus, g->pipeline_s);
    for (int i = 0; i < g->ntypes; i++) {
        fprintf(f, "    {\"name\": \"%s\"", g->names[i]);
        if (g->cost[i][DAHL_ARCH_CPU] > 0.0)
            fprintf(f, ", \"cpu_s\": %.17g", g->cost[i][DAHL_ARCH_CPU]);
        if (g->cost[i][DAHL_ARCH_GPU] > 0.0)
            fprintf(f, ", \"gpu_s\": %.17g", g->cost[i][DAHL_ARCH_GPU]);
        fprintf(f, "}%s\n", i + 1 < g->ntypes ? "," : "");
    }
    fprintf(f, "  ],\n  \"tasks\": [\n");
    for (int t = 0; t < g->ntasks; t++) {
        fprintf(f, "    [%d", g->type[t]);
        for (int k = g->pred_start[t]; k < g->pred_start[t + 1]; k++)
            fprintf(f, ", %d", g->pred[k]);
        fprintf(f, "]%s\n", t + 1 < g->ntasks ? "," : "");
    }
    fprintf(f, "  ]");
    if (g->task_cost != NULL) {
        fprintf(f, ",\n  \"task_costs\": [\n");
        for (int t = 0; t < g->ntasks; t++) {
            fputs("    [", f);
            for (int a = 0; a < DAHL_NARCH; a++) {
                if (g->task_cost[t][a] > 0.0)
                    fprintf(f, "%s%.17g", a > 0 ? ", " : "", g->task_cost[t][a]);
                else
                    fprintf(f, "%snull", a > 0 ? ", " : "");
            }
            fprintf(f, "]%s\n", t + 1 < g->ntasks ? "," : "");
        }
        fprintf(f, "  ]");
    }
    fprintf(f, "\n}\n");
    if (fclose(f) != 0) {
        snprintf(err, err_size, "%s: cannot write: %s", path, strerror(errno));
        return -EIO;
    }
    return 0;
}

static int type_index(const struct dahlsim_dag *g, const char *name)
{
    for (int i = 0; i < g->ntypes; i++)
        if (strcmp(g->names[i], name) == 0)
            return i;
    return -1;
}

int dahlsim_prio_load(const char *path, const struct dahlsim_dag *g, struct dahlsim_prio *p, char *err,
                      size_t err_size)
{
    static const char *const keys[DAHL_NARCH] = {"cpu", "gpu"};
    cJSON *doc = dahlsim_read_json(path);
    if (doc == NULL) {
        snprintf(err, err_size, "%s: cannot read or parse (expected {\"cpu\": [types...], \"gpu\": [types...]})",
                 path);
        return -EINVAL;
    }
    memset(p, 0, sizeof(*p));
    int ret = 0;
    const cJSON *item;
    cJSON_ArrayForEach(item, doc)
    {
        if (strcmp(item->string, "cpu") != 0 && strcmp(item->string, "gpu") != 0) {
            snprintf(err, err_size, "%s: unknown key \"%s\" (expected \"cpu\" and \"gpu\")", path, item->string);
            ret = -EINVAL;
            goto out;
        }
    }
    for (int a = 0; a < DAHL_NARCH; a++) {
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(doc, keys[a]);
        if (list == NULL)
            continue;
        if (!cJSON_IsArray(list)) {
            snprintf(err, err_size, "%s: \"%s\": expected an array of type names", path, keys[a]);
            ret = -EINVAL;
            goto out;
        }
        const cJSON *v;
        cJSON_ArrayForEach(v, list)
        {
            int i = cJSON_IsString(v) ? type_index(g, v->valuestring) : -1;
            if (i < 0 || g->cost[i][a] <= 0.0) {
                snprintf(err, err_size, "%s: \"%s\": expected names of types the graph runs on %s, got %s%s%s", path,
                         keys[a], keys[a], cJSON_IsString(v) ? "\"" : "", cJSON_IsString(v) ? v->valuestring : "a non-string",
                         cJSON_IsString(v) ? "\"" : "");
                ret = -EINVAL;
                goto out;
            }
            for (int k = 0; k < p->n[a]; k++)
                if (p->order[a][k] == i) {
                    snprintf(err, err_size, "%s: \"%s\": type \"%s\" listed twice", path, keys[a], g->names[i]);
                    ret = -EINVAL;
                    goto out;
                }
            p->order[a][p->n[a]++] = i;
        }
    }
out:
    cJSON_Delete(doc);
    return ret;
}

/* ---- the emulator ---- */

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

/* ---- control priorities ---- */

static uint64_t rng_below(uint64_t *state, uint64_t n)
{
    return n > 0 ? dahl_splitmix64(state) % n : 0;
}

static double rng_unit(uint64_t *state)
{
    return (double)(dahl_splitmix64(state) >> 11) * 0x1.0p-53;
}

static void shuffle(int *v, int n, uint64_t *state)
{
    for (int i = n - 1; i > 0; i--) {
        int j = (int)rng_below(state, (uint64_t)i + 1);
        int x = v[i];
        v[i] = v[j];
        v[j] = x;
    }
}

/* Next lexicographic permutation of v; false after the last one. */
static bool next_permutation(int *v, int n)
{
    int i = n - 2;
    while (i >= 0 && v[i] >= v[i + 1])
        i--;
    if (i < 0)
        return false;
    int j = n - 1;
    while (v[j] <= v[i])
        j--;
    int x = v[i];
    v[i] = v[j];
    v[j] = x;
    for (int a = i + 1, b = n - 1; a < b; a++, b--) {
        x = v[a];
        v[a] = v[b];
        v[b] = x;
    }
    return true;
}

static int cmp_int(const void *a, const void *b)
{
    return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

/* One round of the control search on arch a for more than 8 types: each type in turn (in the list's order at
 * the start of the round) is moved to the position where the makespan is least, if that is less than the
 * current one. best and *best_s (its makespan) are updated in place; *out gets the round's makespan. */
static int insertion_round(const struct dahlsim_dag *g, const struct dahlsim_emu_conf *c, struct dahlsim_prio *best,
                           int a, double best_s, double *out, char *err, size_t err_size)
{
    int n = best->n[a], start[DAHLSIM_DAG_MAX_TYPES];
    memcpy(start, best->order[a], (size_t)n * sizeof(int));
    for (int k = 0; k < n; k++) {
        int ty = start[k], from = 0;
        while (best->order[a][from] != ty)
            from++;
        int pos = from;
        for (int to = 0; to < n; to++) {
            if (to == from)
                continue;
            struct dahlsim_prio trial = *best;
            int *v = trial.order[a];
            /* move v[from] to index to */
            if (to < from)
                memmove(v + to + 1, v + to, (size_t)(from - to) * sizeof(int));
            else
                memmove(v + from, v + from + 1, (size_t)(to - from) * sizeof(int));
            v[to] = ty;
            struct dahlsim_emu_result r;
            int ret = dahlsim_dag_emulate(g, c, &trial, &r, err, err_size);
            if (ret != 0)
                return ret;
            if (r.makespan_s < best_s) {
                best_s = r.makespan_s;
                pos = to;
            }
        }
        if (pos != from) {
            int *v = best->order[a];
            if (pos < from)
                memmove(v + pos + 1, v + pos, (size_t)(from - pos) * sizeof(int));
            else
                memmove(v + from, v + from + 1, (size_t)(pos - from) * sizeof(int));
            v[pos] = ty;
        }
    }
    *out = best_s;
    return 0;
}

int dahlsim_dag_control(const struct dahlsim_dag *g, const struct dahlsim_emu_conf *conf, uint64_t seed,
                        int max_rounds, struct dahlsim_prio *best, double *makespan_s, char *err,
                        size_t err_size)
{
    struct dahlsim_emu_conf c = *conf;
    c.autoprio = false;
    uint64_t state = seed;
    int count[DAHL_NARCH] = {conf->cpus, conf->gpus};
    memset(best, 0, sizeof(*best));
    for (int a = 0; a < DAHL_NARCH; a++) {
        if (count[a] == 0)
            continue;
        for (int i = 0; i < g->ntypes; i++)
            if (g->cost[i][a] > 0.0)
                best->order[a][best->n[a]++] = i;
        shuffle(best->order[a], best->n[a], &state);
    }
    struct dahlsim_emu_result r;
    int ret = dahlsim_dag_emulate(g, &c, best, &r, err, err_size);
    if (ret != 0)
        return ret;
    double best_s = r.makespan_s;
    int stale = 0;
    for (int round = 0; round < 2 * max_rounds && stale < 2; round++) {
        int a = round % 2;
        if (best->n[a] < 2) {
            stale++;
            continue;
        }
        if (best->n[a] > 8) {
            double round_best;
            ret = insertion_round(g, &c, best, a, best_s, &round_best, err, err_size);
            if (ret != 0)
                return ret;
            stale = round_best < best_s ? 0 : stale + 1;
            best_s = round_best;
            continue;
        }
        struct dahlsim_prio trial = *best;
        int *v = trial.order[a];
        qsort(v, (size_t)trial.n[a], sizeof(int), cmp_int);
        double round_best = INFINITY;
        int ties = 0;
        int chosen[DAHLSIM_DAG_MAX_TYPES];
        do {
            ret = dahlsim_dag_emulate(g, &c, &trial, &r, err, err_size);
            if (ret != 0)
                return ret;
            /* Ties: reservoir sampling picks one of the equally fast lists uniformly. */
            if (r.makespan_s < round_best) {
                round_best = r.makespan_s;
                ties = 1;
                memcpy(chosen, v, (size_t)trial.n[a] * sizeof(int));
            } else if (r.makespan_s == round_best && rng_below(&state, (uint64_t)++ties) == 0) {
                memcpy(chosen, v, (size_t)trial.n[a] * sizeof(int));
            }
        } while (next_permutation(v, trial.n[a]));
        stale = round_best < best_s ? 0 : stale + 1;
        if (round_best <= best_s) {
            memcpy(best->order[a], chosen, (size_t)best->n[a] * sizeof(int));
            best_s = round_best;
        }
    }
    *makespan_s = best_s;
    return 0;
}

/* ---- lower bound ---- */

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

/* ---- the generator ---- */

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
    int cap = 4 * n + 16, nedges = 0;
    int *pred = malloc((size_t)cap * sizeof(int));
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
                if (nedges == cap) {
                    cap *= 2;
                    int *grown = realloc(pred, (size_t)cap * sizeof(int));
                    if (grown == NULL) {
                        free(type), free(pstart), free(pred), free(finish), free(by_type), free(by_type_n),
                            free(by_type_base), free(avail);
                        snprintf(err, err_size, "out of memory");
                        return -ENOMEM;
                    }
                    pred = grown;
                }
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

/* ---- training graphs ---- */

#define EXPORT_NCLASSES 10   /* as `dahlsim train`: every dataset has 10 classes */
#define EXPORT_DEEP_BLOCKS 3 /* as `dahlsim train --model deep` */
#define EXPORT_DEEP_WIDTH 8

static int export_desc(const struct dahlsim_dag_export_conf *conf, struct dahl_network_desc *d, char *err,
                       size_t err_size)
{
    int ret = -EINVAL;
    if (strcmp(conf->model, "lenet") == 0) {
        ret = dahl_network_desc_lenet(conf->c, conf->h, conf->w, EXPORT_NCLASSES, d);
    } else if (strcmp(conf->model, "deep") == 0 || strncmp(conf->model, "deep:", 5) == 0) {
        char *end = NULL;
        long blocks = conf->model[4] == ':' ? strtol(conf->model + 5, &end, 10) : EXPORT_DEEP_BLOCKS;
        if (end == NULL || (*end == '\0' && end != conf->model + 5 && blocks >= 1 && blocks <= 9))
            ret = dahl_network_desc_deep(conf->c, conf->h, conf->w, EXPORT_NCLASSES, (int)blocks, EXPORT_DEEP_WIDTH, d);
    } else {
        snprintf(err, err_size, "--model %s: expected lenet, deep or deep:BLOCKS (model files are not exported)",
                 conf->model);
        return -EINVAL;
    }
    if (ret != 0 || dahl_network_desc_check(d, err, err_size) != 0) {
        snprintf(err, err_size, "--model %s: cannot build it for a %dx%dx%d image", conf->model, conf->h, conf->w,
                 conf->c);
        return -EINVAL;
    }
    return 0;
}

/* The types of the graph: first-seen order of symbols (or of symbol and footprint). */
static int export_type(char (*names)[64], int *ntypes, const struct dahl_stepgraph_task *t, bool by_footprint)
{
    char name[64];
    if (by_footprint)
        snprintf(name, sizeof(name), "%s:%08x", t->symbol, (unsigned)t->footprint);
    else
        snprintf(name, sizeof(name), "%s", t->symbol);
    for (int i = 0; i < *ntypes; i++)
        if (strcmp(names[i], name) == 0)
            return i;
    if (*ntypes == DAHLSIM_DAG_MAX_TYPES)
        return -1;
    snprintf(names[*ntypes], sizeof(names[0]), "%s", name);
    return (*ntypes)++;
}

int dahlsim_dag_export(const struct dahlsim_dag_export_conf *conf, struct dahlsim_dag *g, char *err,
                       size_t err_size)
{
    memset(g, 0, sizeof(*g));
    struct dahl_network_desc d;
    int ret = export_desc(conf, &d, err, err_size);
    if (ret != 0)
        return ret;
    struct dahl_catalogue_conf cc = {.batch = conf->batch,
                                     .reduction = conf->manual ? DAHL_REDUCTION_MANUAL : DAHL_REDUCTION_REDUX,
                                     .momentum = conf->momentum, .redux_copies = conf->redux_copies};
    struct dahl_stepgraph sg;
    ret = dahl_stepgraph_build(&sg, &d, &cc, conf->steps, err, err_size);
    if (ret != 0)
        return ret;
    /* Sizes for regression models: the catalogue of one step has every (symbol, footprint). */
    struct dahl_catalogue cat;
    dahl_catalogue_init(&cat);
    ret = dahl_catalogue_add_step(&cat, &d, &cc, err, err_size);
    size_t nsym = 0;
    const char *const *symbols = dahl_codelet_symbols(&nsym);
    struct dahlsim_perfmodel **models = calloc(nsym + 1, sizeof(*models));
    char(*names)[64] = calloc(DAHLSIM_DAG_MAX_TYPES, sizeof(*names));
    const char *name_ptr[DAHLSIM_DAG_MAX_TYPES];
    double(*tcost)[DAHL_NARCH] = calloc((size_t)sg.ntasks + 1, sizeof(*tcost));
    double sum[DAHLSIM_DAG_MAX_TYPES][DAHL_NARCH] = {{0}}, count[DAHLSIM_DAG_MAX_TYPES] = {0};
    double mean[DAHLSIM_DAG_MAX_TYPES][DAHL_NARCH];
    int *type = calloc((size_t)sg.ntasks + 1, sizeof(int)), ntypes = 0;
    if (ret == 0 && (models == NULL || names == NULL || tcost == NULL || type == NULL)) {
        snprintf(err, err_size, "out of memory");
        ret = -ENOMEM;
    }
    static const char *const arch_name[DAHL_NARCH] = {"cpu0", "cuda0"};
    int workers[DAHL_NARCH] = {conf->cpus, conf->gpus};
    for (int t = 0; ret == 0 && t < sg.ntasks; t++) {
        const struct dahl_stepgraph_task *k = &sg.tasks[t];
        size_t m = 0;
        while (m < nsym && strcmp(symbols[m], k->symbol) != 0)
            m++;
        char path[PATH_MAX];
        snprintf(path, sizeof(path), "%s/sampling/codelets/45/%s.%s", conf->machine_dir, k->symbol, conf->machine);
        if (m == nsym) {
            snprintf(err, err_size, "%s: not a dahl perf-model symbol", k->symbol);
            ret = -EINVAL;
            break;
        }
        if (models[m] == NULL && (models[m] = dahlsim_perfmodel_load(path, err, err_size)) == NULL) {
            ret = -EINVAL;
            break;
        }
        const struct dahl_catalogue_entry *e = dahl_catalogue_find(&cat, k->symbol, k->footprint);
        /* dahl_softmax_xent stays history-based under every kind (dahl_codelets.h). */
        enum dahl_perfmodel_kind kind = strcmp(k->symbol, "dahl_softmax_xent") == 0
                                            ? DAHL_PERFMODEL_HISTORY
                                            : (enum dahl_perfmodel_kind)conf->perfmodel;
        for (int a = 0; a < DAHL_NARCH; a++) {
            if (workers[a] == 0)
                continue;
            double us = dahlsim_perfmodel_us(models[m], arch_name[a], kind, k->footprint, e != NULL ? e->size : 0);
            if (!(us > 0.0)) {
                snprintf(err, err_size,
                         "%s: no %s estimate for %s footprint %08x (size %zu) on %s (expected a calibration covering "
                         "this setup)",
                         path, dahl_perfmodel_kind_name(kind), k->symbol, (unsigned)k->footprint,
                         e != NULL ? e->size : 0, arch_name[a]);
                ret = -EINVAL;
                break;
            }
            tcost[t][a] = us * 1e-6;
        }
        if (ret != 0)
            break;
        type[t] = export_type(names, &ntypes, k, conf->group_footprint);
        if (type[t] < 0) {
            snprintf(err, err_size, "more than %d task types (try without --group footprint)", DAHLSIM_DAG_MAX_TYPES);
            ret = -EINVAL;
            break;
        }
        count[type[t]] += 1.0;
        for (int a = 0; a < DAHL_NARCH; a++)
            sum[type[t]][a] += tcost[t][a];
    }
    if (ret == 0) {
        for (int i = 0; i < ntypes; i++) {
            name_ptr[i] = names[i];
            for (int a = 0; a < DAHL_NARCH; a++)
                mean[i][a] = sum[i][a] / count[i];
        }
        ret = dahlsim_dag_init(g, ntypes, name_ptr, (const double(*)[DAHL_NARCH])mean, sg.ntasks, type,
                               sg.pred_start, sg.pred, err, err_size);
    }
    if (ret == 0) {
        ret = dahlsim_dag_set_task_costs(g, (const double(*)[DAHL_NARCH])tcost, err, err_size);
        g->cpus = conf->cpus;
        g->gpus = conf->gpus;
        char reduction[64];
        if (conf->manual)
            snprintf(reduction, sizeof(reduction), "manual reduction");
        else
            snprintf(reduction, sizeof(reduction), "REDUX reduction of up to %d per-worker copies", conf->redux_copies);
        snprintf(g->source, sizeof(g->source),
                 "dahlsim dag export: %s on %dx%dx%d images, batch %d, %s, momentum %s, %d step%s, %s perf models of "
                 "calibration %s, one type per %s",
                 conf->model, conf->h, conf->w, conf->c, conf->batch, reduction, conf->momentum ? "on" : "off",
                 conf->steps, conf->steps > 1 ? "s" : "",
                 dahl_perfmodel_kind_name((enum dahl_perfmodel_kind)conf->perfmodel), conf->machine,
                 conf->group_footprint ? "symbol and footprint" : "perf-model symbol");
        if (ret != 0)
            dahlsim_dag_fini(g);
    }
    for (size_t m = 0; models != NULL && m < nsym; m++)
        dahlsim_perfmodel_destroy(models[m]);
    free(models);
    free(names);
    free(tcost);
    free(type);
    dahl_catalogue_fini(&cat);
    dahl_stepgraph_fini(&sg);
    return ret;
}

/* ---- heteroprio for train / sim-train ---- */

static int load_manual_lists(const char *path, struct dahl_heteroprio_conf *out)
{
    static const char *const keys[DAHL_NARCH] = {"cpu", "gpu"};
    cJSON *doc = dahlsim_read_json(path);
    if (doc == NULL || !cJSON_IsObject(doc)) {
        dahlsim_error("--priorities %s: cannot read or parse (expected {\"cpu\": [types...], \"gpu\": [types...]} "
                      "or auto:HEURISTIC)",
                      path);
        cJSON_Delete(doc);
        return DAHLSIM_EXIT_USAGE;
    }
    size_t nsym;
    const char *const *symbols = dahl_codelet_symbols(&nsym);
    const cJSON *item;
    cJSON_ArrayForEach(item, doc)
    {
        int a = strcmp(item->string, "cpu") == 0 ? 0 : strcmp(item->string, "gpu") == 0 ? 1 : -1;
        if (a < 0) {
            dahlsim_error("%s: unknown key \"%s\" (expected \"cpu\" and \"gpu\")", path, item->string);
            cJSON_Delete(doc);
            return DAHLSIM_EXIT_USAGE;
        }
        const cJSON *v;
        if (!cJSON_IsArray(item)) {
            dahlsim_error("%s: \"%s\": expected an array of dahl perf-model symbols", path, keys[a]);
            cJSON_Delete(doc);
            return DAHLSIM_EXIT_USAGE;
        }
        cJSON_ArrayForEach(v, item)
        {
            bool known = false;
            for (size_t k = 0; cJSON_IsString(v) && k < nsym; k++)
                known |= strcmp(v->valuestring, symbols[k]) == 0;
            if (!known || out->n[a] == DAHL_HETEROPRIO_MAX_TYPES) {
                char list[1024];
                size_t used = 0;
                list[0] = '\0';
                for (size_t k = 0; k < nsym && used < sizeof(list); k++)
                    used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s", k > 0 ? ", " : "", symbols[k]);
                dahlsim_error("%s: \"%s\": expected dahl perf-model symbols (%s), got %s%s%s", path, keys[a], list,
                              cJSON_IsString(v) ? "\"" : "", cJSON_IsString(v) ? v->valuestring : "a non-string",
                              cJSON_IsString(v) ? "\"" : "");
                cJSON_Delete(doc);
                return DAHLSIM_EXIT_USAGE;
            }
            snprintf(out->names[a][out->n[a]++], sizeof(out->names[a][0]), "%s", v->valuestring);
        }
    }
    cJSON_Delete(doc);
    return -1;
}

int dahlsim_heteroprio_conf(const char *sched, const char *priorities, long interval,
                            struct dahl_heteroprio_conf *out)
{
    memset(out, 0, sizeof(*out));
    bool heteroprio = sched != NULL && strcmp(sched, "heteroprio") == 0;
    if (!heteroprio) {
        if (priorities != NULL) {
            dahlsim_error("--priorities: only with --sched heteroprio (the policy is %s)", sched ? sched : "the default");
            return DAHLSIM_EXIT_USAGE;
        }
        return -1;
    }
    char list[128];
    dahl_autoprio_heuristic_list(list, sizeof(list));
    if (priorities == NULL) {
        dahlsim_error("--sched heteroprio: expected --priorities FILE or --priorities auto:HEURISTIC (%s)", list);
        return DAHLSIM_EXIT_USAGE;
    }
    if (strncmp(priorities, "auto:", 5) == 0) {
        if (!dahl_heteroprio_parse_auto(priorities, out)) {
            dahlsim_error("--priorities: expected auto:HEURISTIC or auto:HEURISTIC/footprint with HEURISTIC one of %s, "
                          "got \"%s\"",
                          list, priorities);
            return DAHLSIM_EXIT_USAGE;
        }
        out->interval = (int)interval;
        return -1;
    }
    return load_manual_lists(priorities, out);
}

bool dahlsim_scheduler_value(const char *value, char *policy, size_t policy_size, char *priorities,
                             size_t priorities_size, char *expected, size_t expected_size)
{
    static const char prefix[] = "heteroprio:auto-";
    bool ok;
    if (strncmp(value, prefix, sizeof(prefix) - 1) == 0) {
        char spec[64];
        struct dahl_heteroprio_conf hc;
        snprintf(spec, sizeof(spec), "auto:%s", value + sizeof(prefix) - 1);
        ok = strlen(value) < sizeof(spec) && dahl_heteroprio_parse_auto(spec, &hc);
        if (ok && policy != NULL)
            snprintf(policy, policy_size, "heteroprio");
        if (ok && priorities != NULL)
            snprintf(priorities, priorities_size, "auto:%s%s", dahl_autoprio_heuristic_name(hc.heuristic),
                     hc.by_footprint ? "/footprint" : "");
    } else {
        ok = strcmp(value, "heteroprio") != 0 && dahl_sched_policy_known(value);
        if (ok && policy != NULL)
            snprintf(policy, policy_size, "%s", value);
        if (ok && priorities != NULL && priorities_size > 0)
            priorities[0] = '\0';
    }
    if (!ok && expected != NULL)
        snprintf(expected, expected_size, "a StarPU scheduling policy (lws, dmda, eager, ...) or "
                                          "heteroprio:auto-HEURISTIC");
    return ok;
}

/* Edit distance between a and b (both short names), for "did you mean". */
static size_t edit_distance(const char *a, const char *b)
{
    size_t nb = strlen(b), row[64];
    if (nb >= sizeof(row) / sizeof(row[0]))
        return SIZE_MAX;
    for (size_t j = 0; j <= nb; j++)
        row[j] = j;
    for (size_t i = 1; a[i - 1] != '\0'; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= nb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[nb];
}

void dahlsim_scheduler_hint(const char *value)
{
    if (strncmp(value, "heteroprio", strlen("heteroprio")) == 0) {
        char heuristics[128];
        dahl_autoprio_heuristic_list(heuristics, sizeof(heuristics));
        fprintf(stderr,
                "hint: heteroprio needs priorities: heteroprio:auto-HEURISTIC[/footprint], HEURISTIC one of %s\n",
                heuristics);
        return;
    }
    char list[1024], best[48] = "";
    size_t best_d = SIZE_MAX;
    dahl_sched_policy_list(list, sizeof(list));
    char *save = NULL;
    for (char *name = strtok_r(list, ", ", &save); name != NULL; name = strtok_r(NULL, ", ", &save)) {
        size_t d = edit_distance(value, name);
        if (strcmp(name, "heteroprio") != 0 && d < best_d && strlen(name) < sizeof(best)) {
            best_d = d;
            snprintf(best, sizeof(best), "%.47s", name);
        }
    }
    if (best_d <= 2)
        fprintf(stderr, "hint: did you mean \"%s\"? `dahlsim train --help` lists every policy\n", best);
    else
        fprintf(stderr, "hint: common policies: lws, ws, eager, prio, dm, dmda, dmdas; `dahlsim train --help` lists "
                        "every one\n");
}

/* ---- `dahlsim dag` ---- */

static const char dag_usage[] =
    "usage: dahlsim dag gen --out FILE [--seed N] [--tasks N] [--min-types N] [--max-types N] [--max-cpus N]\n"
    "                       [--max-gpus N]\n"
    "       dahlsim dag run GRAPH (--priorities FILE | --auto HEURISTIC | --control) [--cpus N] [--gpus N]\n"
    "                       [--interval N] [--slow-factors] [--seed N]\n"
    "       dahlsim dag table [--graphs N] [--seed N] [--tasks N] [--min-types N] [--max-types N] [--interval N]\n"
    "                       [--slow-factors] [--csv FILE] [--save-graphs DIR] [GRAPH...]\n"
    "       dahlsim dag export --machine NAME --out FILE [--dataset D] [--model M] [--batch N] [--steps N]\n"
    "                       [--reduction redux|manual] [--redux-copies N] [--momentum X] [--perfmodel KIND]\n"
    "                       [--cpus N] [--gpus N] [--group symbol|footprint]\n";

static void dag_help(void)
{
    char list[128];
    dahl_autoprio_heuristic_list(list, sizeof(list));
    printf("%s\n"
           "The scheduler lab: task graphs with per-type CPU/GPU costs, run by a deterministic emulation of\n"
           "StarPU's Heteroprio (no data transfers) on C CPU + G GPU workers.\n\n"
           "  gen    a random graph following the AutoHeteroprio paper's protocol (seeded)\n"
           "  run    emulate one graph with given priority lists, AutoHeteroprio, or the control priorities;\n"
           "         prints one JSON object (makespan, lower bound, tasks per architecture, the lists)\n"
           "  table  N generated graphs, or the GRAPH files given: the slowdown of each heuristic against the\n"
           "         control priorities, as in the paper's Table 3 (markdown on stdout, CSV with --csv)\n"
           "  export the task graph of dahl training steps (dahl_network.c's tasks and data accesses, StarPU's\n"
           "         dependency rules and REDUX reductions) with costs from a calibration's perf models\n\n"
           "options:\n"
           "  --priorities FILE  {\"cpu\": [types...], \"gpu\": [types...]}, most wanted first\n"
           "  --auto HEURISTIC   AutoHeteroprio with one of: %s\n"
           "  --control          the paper's control priorities (iterative search over permutations)\n"
           "  --cpus N, --gpus N workers (default: the graph's)\n"
           "  --interval N       auto: recompute the priorities every N pushed tasks (default 32)\n"
           "  --slow-factors     apply StarPU 1.3.10 heteroprio's slow-factor rule\n"
           "  --seed N           generator / control seed (default 1)\n"
           "  --tasks N          tasks per generated graph (default 1000)\n"
           "  --min-types N, --max-types N  task types per generated graph (default 3 to 6; at most 8 for control)\n"
           "  --max-cpus N, --max-gpus N    generated worker counts are drawn in [1, N] (default 15)\n"
           "  --graphs N         table: number of graphs (default 32)\n"
           "export options:\n"
           "  --machine NAME     calibration/NAME: its perf models give the costs (required)\n"
           "  --dataset D        fashion-mnist (default) or synthetic:HxWxC: the image shape\n"
           "  --model M          lenet (default), deep or deep:BLOCKS\n"
           "  --batch N          samples per step (default 32)\n"
           "  --steps N          consecutive training steps in the graph (default 1)\n"
           "  --reduction R      redux (default) or manual, as dahlsim train\n"
           "  --redux-copies N   REDUX: per-worker copies StarPU reduces per gradient and step (default: the\n"
           "                     workers, at most the batch; the real number depends on the schedule)\n"
           "  --momentum X       as dahlsim train (default 0.9; 0 changes the SGD tasks)\n"
           "  --perfmodel KIND   history (default), regression or nl-regression\n"
           "  --cpus N, --gpus N the workers the graph is for (default: the machine's platform; CUDA costs\n"
           "                     only with --gpus > 0)\n"
           "  --group G          one task type per perf-model symbol (default) or per symbol and footprint\n",
           dag_usage, list);
}

struct dag_opts {
    const char *out, *priorities, *csv, *save_graphs;
    const char *machine, *dataset, *model, *reduction, *perfmodel, *group;
    long batch, steps, redux_copies;
    double momentum;
    bool control, slow_factors, auto_set;
    enum dahl_autoprio_heuristic heuristic;
    long seed, tasks, min_types, max_types, max_cpus, max_gpus, cpus, gpus, interval, graphs;
};

static int dag_parse(int argc, char **argv, struct dag_opts *o, int *nargs, char ***args)
{
    enum {
        O_OUT = 256, O_PRIO, O_AUTO, O_CONTROL, O_CPUS, O_GPUS, O_INTERVAL, O_SLOW, O_SEED, O_TASKS, O_MINT, O_MAXT,
        O_MAXC, O_MAXG, O_GRAPHS, O_CSV, O_SAVE, O_HELP, O_MACHINE, O_DATASET, O_MODEL, O_BATCH, O_STEPS,
        O_REDUCTION, O_COPIES, O_MOMENTUM, O_PERFMODEL, O_GROUP
    };
    static const struct option options[] = {
        {"out", required_argument, NULL, O_OUT},         {"priorities", required_argument, NULL, O_PRIO},
        {"auto", required_argument, NULL, O_AUTO},       {"control", no_argument, NULL, O_CONTROL},
        {"cpus", required_argument, NULL, O_CPUS},       {"gpus", required_argument, NULL, O_GPUS},
        {"interval", required_argument, NULL, O_INTERVAL}, {"slow-factors", no_argument, NULL, O_SLOW},
        {"seed", required_argument, NULL, O_SEED},       {"tasks", required_argument, NULL, O_TASKS},
        {"min-types", required_argument, NULL, O_MINT},  {"max-types", required_argument, NULL, O_MAXT},
        {"max-cpus", required_argument, NULL, O_MAXC},   {"max-gpus", required_argument, NULL, O_MAXG},
        {"graphs", required_argument, NULL, O_GRAPHS},   {"csv", required_argument, NULL, O_CSV},
        {"save-graphs", required_argument, NULL, O_SAVE}, {"help", no_argument, NULL, O_HELP},
        {"machine", required_argument, NULL, O_MACHINE}, {"dataset", required_argument, NULL, O_DATASET},
        {"model", required_argument, NULL, O_MODEL},     {"batch", required_argument, NULL, O_BATCH},
        {"steps", required_argument, NULL, O_STEPS},     {"reduction", required_argument, NULL, O_REDUCTION},
        {"redux-copies", required_argument, NULL, O_COPIES}, {"momentum", required_argument, NULL, O_MOMENTUM},
        {"perfmodel", required_argument, NULL, O_PERFMODEL}, {"group", required_argument, NULL, O_GROUP},
        {NULL, 0, NULL, 0},
    };
    *o = (struct dag_opts){.seed = 1, .tasks = 1000, .min_types = 3, .max_types = 6, .max_cpus = 15, .max_gpus = 15,
                           .cpus = -1, .gpus = -1, .interval = 32, .graphs = 32, .dataset = "fashion-mnist",
                           .model = "lenet", .reduction = "redux", .perfmodel = "history", .group = "symbol",
                           .batch = 32, .steps = 1, .redux_copies = -1, .momentum = 0.9};
    optind = 1;
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, ":", options, NULL)) != -1) {
        bool ok = true;
        switch (opt) {
        case O_OUT: o->out = optarg; break;
        case O_PRIO: o->priorities = optarg; break;
        case O_AUTO:
            if (!dahl_autoprio_heuristic_parse(optarg, &o->heuristic)) {
                char list[128];
                dahl_autoprio_heuristic_list(list, sizeof(list));
                dahlsim_error("dag: --auto: expected a heuristic (%s), got \"%s\"", list, optarg);
                ok = false;
            }
            o->auto_set = true;
            break;
        case O_CONTROL: o->control = true; break;
        case O_CPUS: ok = dahlsim_parse_int("--cpus", optarg, 0, 4096, &o->cpus); break;
        case O_GPUS: ok = dahlsim_parse_int("--gpus", optarg, 0, 4096, &o->gpus); break;
        case O_INTERVAL: ok = dahlsim_parse_int("--interval", optarg, 1, 1000000000, &o->interval); break;
        case O_SLOW: o->slow_factors = true; break;
        case O_SEED: ok = dahlsim_parse_int("--seed", optarg, 0, 2147483647, &o->seed); break;
        case O_TASKS: ok = dahlsim_parse_int("--tasks", optarg, 1, 10000000, &o->tasks); break;
        case O_MINT: ok = dahlsim_parse_int("--min-types", optarg, 1, DAHLSIM_DAG_MAX_TYPES, &o->min_types); break;
        case O_MAXT: ok = dahlsim_parse_int("--max-types", optarg, 1, DAHLSIM_DAG_MAX_TYPES, &o->max_types); break;
        case O_MAXC: ok = dahlsim_parse_int("--max-cpus", optarg, 1, 4096, &o->max_cpus); break;
        case O_MAXG: ok = dahlsim_parse_int("--max-gpus", optarg, 1, 4096, &o->max_gpus); break;
        case O_GRAPHS: ok = dahlsim_parse_int("--graphs", optarg, 1, 100000, &o->graphs); break;
        case O_CSV: o->csv = optarg; break;
        case O_SAVE: o->save_graphs = optarg; break;
        case O_MACHINE: o->machine = optarg; break;
        case O_DATASET: o->dataset = optarg; break;
        case O_MODEL: o->model = optarg; break;
        case O_BATCH: ok = dahlsim_parse_int("--batch", optarg, 1, 65536, &o->batch); break;
        case O_STEPS: ok = dahlsim_parse_int("--steps", optarg, 1, 100000, &o->steps); break;
        case O_COPIES: ok = dahlsim_parse_int("--redux-copies", optarg, 1, 1024, &o->redux_copies); break;
        case O_REDUCTION: o->reduction = optarg; break;
        case O_PERFMODEL: o->perfmodel = optarg; break;
        case O_GROUP: o->group = optarg; break;
        case O_MOMENTUM: {
            char *end;
            o->momentum = strtod(optarg, &end);
            if (*optarg == '\0' || *end != '\0' || !isfinite(o->momentum) || o->momentum < 0.0 || o->momentum >= 1.0) {
                dahlsim_error("dag: --momentum: expected a number in [0, 1), got \"%s\"", optarg);
                ok = false;
            }
            break;
        }
        case O_HELP: dag_help(); return -1;
        default: /* ':' (no value) or an unknown option */
            return dahlsim_option_misuse("dag", opt, argv, dag_usage);
        }
        if (!ok)
            return DAHLSIM_EXIT_USAGE;
    }
    if (o->min_types > o->max_types) {
        dahlsim_error("dag: --min-types %ld: expected at most --max-types (%ld)", o->min_types, o->max_types);
        return DAHLSIM_EXIT_USAGE;
    }
    *nargs = argc - optind;
    *args = argv + optind;
    return 0;
}

static void print_list(FILE *f, const struct dahlsim_dag *g, const struct dahlsim_prio *p, int a)
{
    fputc('[', f);
    for (int k = 0; k < p->n[a]; k++)
        fprintf(f, "%s\"%s\"", k > 0 ? ", " : "", g->names[p->order[a][k]]);
    fputc(']', f);
}

static int dag_gen(const struct dag_opts *o, int nargs)
{
    if (nargs != 0 || o->out == NULL) {
        dahlsim_error("dag gen: expected --out FILE and no other argument");
        fputs(dag_usage, stderr);
        return DAHLSIM_EXIT_USAGE;
    }
    struct dahlsim_dag_gen_conf gc = {.seed = (uint64_t)o->seed, .ntasks = (int)o->tasks, .min_types = (int)o->min_types,
                                      .max_types = (int)o->max_types, .max_cpus = (int)o->max_cpus,
                                      .max_gpus = (int)o->max_gpus};
    struct dahlsim_dag g;
    char err[512];
    if (dahlsim_dag_generate(&gc, &g, err, sizeof(err)) != 0) {
        dahlsim_error("dag gen: %s", err);
        return DAHLSIM_EXIT_USAGE;
    }
    int ret = dahlsim_dag_save(&g, o->out, err, sizeof(err));
    if (ret != 0)
        dahlsim_error("dag gen: %s", err);
    else
        fprintf(stderr, "dahlsim dag gen: %s: %d tasks, %d types, %d CPUs + %d GPUs, pipeline makespan %.6g s\n", o->out,
                g.ntasks, g.ntypes, g.cpus, g.gpus, g.pipeline_s);
    dahlsim_dag_fini(&g);
    return ret != 0 ? DAHLSIM_EXIT_FAILURE : DAHLSIM_EXIT_OK;
}

static int dag_run(const struct dag_opts *o, int nargs, char **args)
{
    int modes = (o->priorities != NULL) + o->auto_set + o->control;
    if (nargs != 1 || modes != 1) {
        dahlsim_error("dag run: expected one GRAPH and exactly one of --priorities FILE, --auto HEURISTIC, --control");
        fputs(dag_usage, stderr);
        return DAHLSIM_EXIT_USAGE;
    }
    struct dahlsim_dag g;
    char err[512];
    if (dahlsim_dag_load(args[0], &g, err, sizeof(err)) != 0) {
        dahlsim_error("%s", err);
        return DAHLSIM_EXIT_USAGE;
    }
    struct dahlsim_emu_conf conf = {.cpus = o->cpus >= 0 ? (int)o->cpus : g.cpus,
                                    .gpus = o->gpus >= 0 ? (int)o->gpus : g.gpus,
                                    .slow_factors = o->slow_factors, .autoprio = o->auto_set,
                                    .heuristic = o->heuristic, .interval = (int)o->interval};
    int status = DAHLSIM_EXIT_OK;
    struct dahlsim_prio prio = {0};
    struct dahlsim_emu_result r;
    if (conf.cpus + conf.gpus < 1) {
        dahlsim_error("dag run: %s: no workers (give --cpus/--gpus; the graph names none)", args[0]);
        status = DAHLSIM_EXIT_USAGE;
    } else if (o->priorities != NULL && dahlsim_prio_load(o->priorities, &g, &prio, err, sizeof(err)) != 0) {
        dahlsim_error("%s", err);
        status = DAHLSIM_EXIT_USAGE;
    } else if (o->control) {
        double ms;
        if (dahlsim_dag_control(&g, &conf, (uint64_t)o->seed, 16, &prio, &ms, err, sizeof(err)) != 0 ||
            dahlsim_dag_emulate(&g, &conf, &prio, &r, err, sizeof(err)) != 0) {
            dahlsim_error("dag run: %s: %s", args[0], err);
            status = DAHLSIM_EXIT_USAGE;
        }
    } else if (dahlsim_dag_emulate(&g, &conf, &prio, &r, err, sizeof(err)) != 0) {
        dahlsim_error("dag run: %s: %s", args[0], err);
        status = DAHLSIM_EXIT_USAGE;
    }
    if (status == DAHLSIM_EXIT_OK) {
        printf("{\"graph\": \"%s\", \"cpus\": %d, \"gpus\": %d, \"priorities\": \"%s\", \"makespan_s\": %.17g, "
               "\"lower_bound_s\": %.17g, \"pipeline_makespan_s\": %.17g, \"tasks_on\": {\"cpu\": %ld, \"gpu\": %ld}, "
               "\"busy_s\": {\"cpu\": %.17g, \"gpu\": %.17g}, \"lists\": {\"cpu\": ",
               args[0], conf.cpus, conf.gpus,
               o->control ? "control" : o->auto_set ? dahl_autoprio_heuristic_name(o->heuristic) : o->priorities,
               r.makespan_s, dahlsim_dag_lower_bound(&g, conf.cpus, conf.gpus), g.pipeline_s, r.tasks_on[0],
               r.tasks_on[1], r.busy_s[0], r.busy_s[1]);
        print_list(stdout, &g, &r.last, DAHL_ARCH_CPU);
        printf(", \"gpu\": ");
        print_list(stdout, &g, &r.last, DAHL_ARCH_GPU);
        printf("}}\n");
    }
    dahlsim_dag_fini(&g);
    return status;
}

/* The CPU and CUDA hosts of a machine's SimGrid platform. False when the file cannot be read. */
static bool platform_workers(const char *machine_dir, const char *machine, int *ncpu, int *ngpu, char *path,
                             size_t size)
{
    snprintf(path, size, "%s/sampling/bus/%s.platform.v4.xml", machine_dir, machine);
    char *text = dahlsim_read_text(path, 16u << 20);
    if (text == NULL)
        return false;
    *ncpu = *ngpu = 0;
    for (const char *p = strstr(text, "id=\""); p != NULL; p = strstr(p + 4, "id=\"")) {
        *ncpu += strncmp(p + 4, "CPU", 3) == 0;
        *ngpu += strncmp(p + 4, "CUDA", 4) == 0;
    }
    free(text);
    return true;
}

static int dag_export(const struct dag_opts *o, int nargs)
{
    if (nargs != 0 || o->out == NULL || o->machine == NULL) {
        dahlsim_error("dag export: expected --machine NAME and --out FILE, and no other argument");
        fputs(dag_usage, stderr);
        return DAHLSIM_EXIT_USAGE;
    }
    struct dahlsim_dag_export_conf conf = {.machine = o->machine, .model = o->model, .batch = (int)o->batch,
                                           .steps = (int)o->steps, .momentum = o->momentum != 0.0};
    long h = 28, w = 28, c = 1;
    char tail;
    if (strcmp(o->dataset, "fashion-mnist") != 0 &&
        (strncmp(o->dataset, "synthetic:", 10) != 0 ||
         sscanf(o->dataset, "synthetic:%ldx%ldx%ld%c", &h, &w, &c, &tail) != 3 || h < 1 || w < 1 || c < 1 ||
         h > 4096 || w > 4096 || c > 64)) {
        dahlsim_error("dag export: --dataset: expected fashion-mnist or synthetic:HxWxC (sizes in [1, 4096], C <= 64), "
                      "got \"%s\"",
                      o->dataset);
        return DAHLSIM_EXIT_USAGE;
    }
    conf.h = (int)h, conf.w = (int)w, conf.c = (int)c;
    if (strcmp(o->reduction, "redux") != 0 && strcmp(o->reduction, "manual") != 0) {
        dahlsim_error("dag export: --reduction: expected redux or manual, got \"%s\"", o->reduction);
        return DAHLSIM_EXIT_USAGE;
    }
    conf.manual = strcmp(o->reduction, "manual") == 0;
    enum dahl_perfmodel_kind kind;
    if (dahl_perfmodel_kind_parse(o->perfmodel, &kind) != 0) {
        dahlsim_error("dag export: --perfmodel: expected history, regression or nl-regression, got \"%s\"", o->perfmodel);
        return DAHLSIM_EXIT_USAGE;
    }
    conf.perfmodel = (int)kind;
    if (strcmp(o->group, "symbol") != 0 && strcmp(o->group, "footprint") != 0) {
        dahlsim_error("dag export: --group: expected symbol or footprint, got \"%s\"", o->group);
        return DAHLSIM_EXIT_USAGE;
    }
    conf.group_footprint = strcmp(o->group, "footprint") == 0;
    char dir[PATH_MAX], platform[PATH_MAX + 128];
    if (snprintf(dir, sizeof(dir), "%s/%s", dahlsim_calibration_root(), o->machine) >= (int)sizeof(dir) ||
        !dahlsim_is_dir(dir)) {
        dahlsim_error("dag export: --machine %s: no directory %s", o->machine, dir);
        fprintf(stderr, "hint: machines are the directories of %s (dahlsim calibrate or dahlsim machine synth)\n",
                dahlsim_calibration_root());
        return DAHLSIM_EXIT_USAGE;
    }
    conf.machine_dir = dir;
    int ncpu, ngpu;
    if (!platform_workers(dir, o->machine, &ncpu, &ngpu, platform, sizeof(platform))) {
        dahlsim_error("dag export: --machine %s: cannot read its platform %s: %s", o->machine, platform, strerror(errno));
        return DAHLSIM_EXIT_USAGE;
    }
    conf.cpus = o->cpus >= 0 ? (int)o->cpus : ncpu;
    conf.gpus = o->gpus >= 0 ? (int)o->gpus : ngpu;
    if (conf.cpus > ncpu || conf.gpus > ngpu || conf.cpus + conf.gpus < 1) {
        dahlsim_error("dag export: --cpus %d --gpus %d: expected at least one worker and at most the %d CPUs and %d "
                      "GPUs of %s",
                      conf.cpus, conf.gpus, ncpu, ngpu, platform);
        return DAHLSIM_EXIT_USAGE;
    }
    /* REDUX: StarPU reduces one copy per worker that ran a REDUX task on the tensor; with many samples per
     * step every worker usually has, hence the default. */
    int workers = conf.cpus + conf.gpus;
    conf.redux_copies = o->redux_copies > 0 ? (int)o->redux_copies : workers < conf.batch ? workers : conf.batch;
    struct dahlsim_dag g;
    char err[1024];
    if (dahlsim_dag_export(&conf, &g, err, sizeof(err)) != 0) {
        dahlsim_error("dag export: %s", err);
        return DAHLSIM_EXIT_USAGE;
    }
    int ret = dahlsim_dag_save(&g, o->out, err, sizeof(err));
    if (ret != 0)
        dahlsim_error("dag export: %s", err);
    else
        fprintf(stderr, "dahlsim dag export: %s: %d tasks, %d types, %d CPUs + %d GPUs, lower bound %.6g s\n", o->out,
                g.ntasks, g.ntypes, g.cpus, g.gpus, dahlsim_dag_lower_bound(&g, g.cpus, g.gpus));
    dahlsim_dag_fini(&g);
    return ret != 0 ? DAHLSIM_EXIT_FAILURE : DAHLSIM_EXIT_OK;
}

/* The table's column order: the paper's Table 3. */
static const enum dahl_autoprio_heuristic table_order[DAHL_AUTOPRIO_NHEURISTICS] = {
    DAHL_AUTOPRIO_OFFSET, DAHL_AUTOPRIO_SOFTPLUS, DAHL_AUTOPRIO_INTERP,
    DAHL_AUTOPRIO_PURWS,  DAHL_AUTOPRIO_PRWS,     DAHL_AUTOPRIO_NTC,
};

static int dag_table(const struct dag_opts *o, int nargs, char **args)
{
    if (nargs == 0 && o->max_types > 8) {
        dahlsim_error("dag table: --max-types %ld: expected at most 8 (the control tries every permutation)",
                      o->max_types);
        return DAHLSIM_EXIT_USAGE;
    }
    FILE *csv = NULL;
    if (o->csv != NULL && (csv = fopen(o->csv, "w")) == NULL) {
        dahlsim_error("dag table: --csv %s: cannot write: %s", o->csv, strerror(errno));
        return DAHLSIM_EXIT_USAGE;
    }
    if (o->save_graphs != NULL && dahlsim_make_dirs(o->save_graphs) != 0) {
        dahlsim_error("dag table: --save-graphs %s: cannot create the directory", o->save_graphs);
        if (csv)
            fclose(csv);
        return DAHLSIM_EXIT_USAGE;
    }
    printf("| graph | CPUs | GPUs | types | tasks | lower bound s | control s | control/LB |");
    for (int h = 0; h < DAHL_AUTOPRIO_NHEURISTICS; h++)
        printf(" %s |", dahl_autoprio_heuristic_name(table_order[h]));
    printf(" best |\n|---|---|---|---|---|---|---|---|");
    for (int h = 0; h <= DAHL_AUTOPRIO_NHEURISTICS; h++)
        printf("---|");
    printf("\n");
    if (csv != NULL) {
        fprintf(csv, "graph,seed,cpus,gpus,types,tasks,lower_bound_s,pipeline_s,control_s");
        for (int h = 0; h < DAHL_AUTOPRIO_NHEURISTICS; h++)
            fprintf(csv, ",%s", dahl_autoprio_heuristic_name(table_order[h]));
        fprintf(csv, ",best\n");
    }
    double sum[DAHL_AUTOPRIO_NHEURISTICS + 1] = {0}, worst[DAHL_AUTOPRIO_NHEURISTICS + 1] = {0};
    int best_under_110 = 0, wins[DAHL_AUTOPRIO_NHEURISTICS] = {0};
    double t0 = dahlsim_mono_s();
    int status = DAHLSIM_EXIT_OK;
    long ngraphs = nargs > 0 ? nargs : o->graphs;
    for (long i = 0; i < ngraphs; i++) {
        /* One seed per graph, drawn from the table's seed: graph i is the same whatever --graphs is. */
        uint64_t st = (uint64_t)o->seed * 0x100000001b3ull + (uint64_t)i;
        uint64_t gseed = dahl_splitmix64(&st);
        struct dahlsim_dag_gen_conf gc = {.seed = gseed, .ntasks = (int)o->tasks, .min_types = (int)o->min_types,
                                          .max_types = (int)o->max_types, .max_cpus = (int)o->max_cpus,
                                          .max_gpus = (int)o->max_gpus};
        struct dahlsim_dag g;
        char err[1024];
        if (nargs > 0 && dahlsim_dag_load(args[i], &g, err, sizeof(err)) != 0) {
            dahlsim_error("dag table: %s", err);
            status = DAHLSIM_EXIT_USAGE;
            break;
        }
        if (nargs > 0 && (o->cpus >= 0 || o->gpus >= 0)) {
            g.cpus = o->cpus >= 0 ? (int)o->cpus : g.cpus;
            g.gpus = o->gpus >= 0 ? (int)o->gpus : g.gpus;
        }
        if (nargs > 0 && g.cpus + g.gpus < 1) {
            dahlsim_error("dag table: %s: no workers (give --cpus/--gpus; the graph names none)", args[i]);
            dahlsim_dag_fini(&g);
            status = DAHLSIM_EXIT_USAGE;
            break;
        }
        if (nargs == 0 && dahlsim_dag_generate(&gc, &g, err, sizeof(err)) != 0) {
            dahlsim_error("dag table: graph %ld: %s", i, err);
            status = DAHLSIM_EXIT_USAGE;
            break;
        }
        if (o->save_graphs != NULL) {
            char path[4096];
            snprintf(path, sizeof(path), "%s/graph-%02ld.json", o->save_graphs, i);
            if (dahlsim_dag_save(&g, path, err, sizeof(err)) != 0)
                dahlsim_error("dag table: %s", err);
        }
        struct dahlsim_emu_conf conf = {.cpus = g.cpus, .gpus = g.gpus, .slow_factors = o->slow_factors,
                                        .interval = (int)o->interval};
        struct dahlsim_prio control;
        double control_s, slow[DAHL_AUTOPRIO_NHEURISTICS], best = INFINITY;
        if (dahlsim_dag_control(&g, &conf, gseed, 16, &control, &control_s, err, sizeof(err)) != 0) {
            dahlsim_error("dag table: graph %ld: %s", i, err);
            dahlsim_dag_fini(&g);
            status = DAHLSIM_EXIT_FAILURE;
            break;
        }
        double lb = dahlsim_dag_lower_bound(&g, g.cpus, g.gpus);
        char label[64];
        if (nargs > 0) {
            const char *base = strrchr(args[i], '/');
            snprintf(label, sizeof(label), "%s", base != NULL ? base + 1 : args[i]);
        } else {
            snprintf(label, sizeof(label), "%ld", i);
        }
        /* %.4g: generated graphs cost seconds to hours, exported training steps milliseconds. */
        printf("| %s | %d | %d | %d | %d | %.4g | %.4g | %.3f |", label, g.cpus, g.gpus, g.ntypes, g.ntasks, lb,
               control_s, control_s / lb);
        for (int h = 0; h < DAHL_AUTOPRIO_NHEURISTICS; h++) {
            conf.autoprio = true;
            conf.heuristic = table_order[h];
            struct dahlsim_emu_result r;
            if (dahlsim_dag_emulate(&g, &conf, NULL, &r, err, sizeof(err)) != 0) {
                dahlsim_error("dag table: graph %ld: %s", i, err);
                status = DAHLSIM_EXIT_FAILURE;
                break;
            }
            slow[h] = r.makespan_s / control_s;
            printf(" %.3f |", slow[h]);
            sum[h] += slow[h];
            if (slow[h] > worst[h])
                worst[h] = slow[h];
            if (slow[h] < best)
                best = slow[h];
        }
        if (status != DAHLSIM_EXIT_OK) {
            dahlsim_dag_fini(&g);
            break;
        }
        for (int h = 0; h < DAHL_AUTOPRIO_NHEURISTICS; h++)
            if (slow[h] == best)
                wins[h]++;
        sum[DAHL_AUTOPRIO_NHEURISTICS] += best;
        if (best > worst[DAHL_AUTOPRIO_NHEURISTICS])
            worst[DAHL_AUTOPRIO_NHEURISTICS] = best;
        best_under_110 += best < 1.10;
        printf(" %.3f |\n", best);
        fflush(stdout);
        if (csv != NULL) {
            fprintf(csv, "%s,%llu,%d,%d,%d,%d,%.17g,%.17g,%.17g", label, (unsigned long long)gseed, g.cpus, g.gpus,
                    g.ntypes, g.ntasks, lb, g.pipeline_s, control_s);
            for (int h = 0; h < DAHL_AUTOPRIO_NHEURISTICS; h++)
                fprintf(csv, ",%.6f", slow[h]);
            fprintf(csv, ",%.6f\n", best);
        }
        dahlsim_dag_fini(&g);
    }
    if (status == DAHLSIM_EXIT_OK) {
        printf("| mean | | | | | | | |");
        for (int h = 0; h <= DAHL_AUTOPRIO_NHEURISTICS; h++)
            printf(" %.3f |", sum[h] / (double)ngraphs);
        printf("\n| max | | | | | | | |");
        for (int h = 0; h <= DAHL_AUTOPRIO_NHEURISTICS; h++)
            printf(" %.3f |", worst[h]);
        printf("\n| best on | | | | | | | |");
        for (int h = 0; h < DAHL_AUTOPRIO_NHEURISTICS; h++)
            printf(" %d |", wins[h]);
        printf(" |\n\nbest heuristic < 1.10 on %d of %ld graphs\n", best_under_110, ngraphs);
        fprintf(stderr, "dahlsim dag table: %ld graphs in %.1f s\n", ngraphs, dahlsim_mono_s() - t0);
    }
    if (csv != NULL && fclose(csv) != 0) {
        dahlsim_error("dag table: --csv %s: cannot write", o->csv);
        status = DAHLSIM_EXIT_FAILURE;
    }
    return status;
}

int dahlsim_cmd_dag(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        if (argc < 2) {
            fputs(dag_usage, stderr);
            return DAHLSIM_EXIT_USAGE;
        }
        dag_help();
        return DAHLSIM_EXIT_OK;
    }
    const char *sub = argv[1];
    if (strcmp(sub, "gen") != 0 && strcmp(sub, "run") != 0 && strcmp(sub, "table") != 0 && strcmp(sub, "export") != 0) {
        dahlsim_error("dag: unknown subcommand \"%s\" (expected gen, run, table or export)", sub);
        fputs(dag_usage, stderr);
        return DAHLSIM_EXIT_USAGE;
    }
    struct dag_opts o;
    int nargs = 0;
    char **args = NULL;
    int ret = dag_parse(argc - 1, argv + 1, &o, &nargs, &args);
    if (ret != 0)
        return ret < 0 ? DAHLSIM_EXIT_OK : ret;
    if (strcmp(sub, "gen") == 0)
        return dag_gen(&o, nargs);
    if (strcmp(sub, "run") == 0)
        return dag_run(&o, nargs, args);
    if (strcmp(sub, "export") == 0)
        return dag_export(&o, nargs);
    return dag_table(&o, nargs, args);
}
