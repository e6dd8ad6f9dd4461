/* Lab graphs (see dahlsim_dag.h): building one from CSR arrays, per-task costs, the dahlsim-dag-1 JSON file
 * (load with every key checked, save by hand, one task a line), and priority-list files naming its types. */
#include "dahlsim_dag.h"

#include "dahlsim_fs.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    free(g->task_layer);
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
    if (pipe != NULL && !(cJSON_IsNumber(pipe) && pipe->valuedouble >= 0.0 && isfinite(pipe->valuedouble))) {
        /* what dahlsim_dag_save writes back must read again (fuzz_dag found 32.2E436484721: inf) */
        snprintf(err, err_size, "%s: \"pipeline_makespan_s\": expected a finite number >= 0", path);
        dahlsim_dag_fini(g);
        ret = -EINVAL;
        goto out;
    }
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
    if (doc == NULL || !cJSON_IsObject(doc)) {
        snprintf(err, err_size, "%s: cannot read or parse (expected {\"cpu\": [types...], \"gpu\": [types...]})",
                 path);
        cJSON_Delete(doc);
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
