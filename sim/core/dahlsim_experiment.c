/* The experiment record and its file: see dahlsim_experiment.h. One table lists the fields; saving and loading
 * walk it, so a new key is one line here (and its meaning in the struct). */
#include "dahlsim_experiment.h"
#include "dahlsim_fs.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POINT_FORMAT 1 /* "dahlsim_point": the file's layout; a reader refuses any other */

/* FIELD_OBJECTS and FIELD_SEQUENCE are arrays whose length is the long at count_offset: a list of objects
 * (each of the fields in sub, elem_size bytes apart: jobs, node groups) and a list of job indices. */
enum field_type { FIELD_STRING, FIELD_LONG, FIELD_DOUBLE, FIELD_BOOL, FIELD_OBJECTS, FIELD_SEQUENCE };

struct field {
    const char *key;
    enum field_type type;
    size_t offset, size;
    size_t count_offset;
    const struct field *sub; /* FIELD_OBJECTS: each element's fields (nsub), elem_size bytes each */
    size_t nsub, elem_size;
};

#define FIELD(name, type) {#name, type, offsetof(struct dahlsim_experiment, name), sizeof(((struct dahlsim_experiment *)0)->name), 0, NULL, 0, 0}
#define SEQUENCE(name, count)                                                                                      \
    {#name, FIELD_SEQUENCE, offsetof(struct dahlsim_experiment, name),                                             \
     sizeof(((struct dahlsim_experiment *)0)->name), offsetof(struct dahlsim_experiment, count), NULL, 0, 0}
#define OBJECTS(name, count, table, type)                                                                          \
    {#name, FIELD_OBJECTS, offsetof(struct dahlsim_experiment, name), sizeof(((struct dahlsim_experiment *)0)->name), \
     offsetof(struct dahlsim_experiment, count), table, sizeof(table) / sizeof(table[0]), sizeof(type)}
#define SUB_FIELD(st, name, type) {#name, type, offsetof(st, name), sizeof(((st *)0)->name), 0, NULL, 0, 0}
#define JOB_FIELD(name, type) SUB_FIELD(struct dahlsim_job, name, type)
#define GROUP_FIELD(name, type) SUB_FIELD(struct dahlsim_node_group, name, type)

static const struct field job_fields[] = {
    JOB_FIELD(name, FIELD_STRING),      JOB_FIELD(model, FIELD_STRING),   JOB_FIELD(dataset, FIELD_STRING),
    JOB_FIELD(batch, FIELD_LONG),       JOB_FIELD(samples, FIELD_LONG),   JOB_FIELD(start_s, FIELD_DOUBLE),
    JOB_FIELD(priority, FIELD_LONG),
};

static const struct field group_fields[] = {
    GROUP_FIELD(machine, FIELD_STRING),
    GROUP_FIELD(count, FIELD_LONG),               GROUP_FIELD(share, FIELD_LONG),
    GROUP_FIELD(cpus, FIELD_LONG),                GROUP_FIELD(gpus, FIELD_LONG),
    GROUP_FIELD(pstates, FIELD_STRING),
    GROUP_FIELD(submit_us_per_task, FIELD_DOUBLE), GROUP_FIELD(input_copy_bytes_per_s, FIELD_DOUBLE),
    GROUP_FIELD(sched_push_us, FIELD_DOUBLE),     GROUP_FIELD(worker_us, FIELD_DOUBLE),
};

static const struct field fields[] = {
    FIELD(scenario, FIELD_STRING),
    FIELD(machine, FIELD_STRING),
    FIELD(machine_dir, FIELD_STRING),
    FIELD(model, FIELD_STRING),
    FIELD(dataset, FIELD_STRING),
    FIELD(samples, FIELD_LONG),
    FIELD(batch, FIELD_LONG),
    FIELD(epochs, FIELD_LONG),
    FIELD(grain, FIELD_LONG),
    FIELD(grain_choice, FIELD_STRING),
    FIELD(kernel_models, FIELD_STRING),
    FIELD(pipeline_depth, FIELD_LONG),
    FIELD(pipeline_schedule, FIELD_STRING),
    FIELD(scheduler, FIELD_STRING),
    FIELD(sched_gamma, FIELD_DOUBLE),
    FIELD(steady_warmup, FIELD_LONG),
    FIELD(steady_tolerance, FIELD_DOUBLE),
    FIELD(cpus, FIELD_LONG),
    FIELD(gpus, FIELD_LONG),
    FIELD(gpu_memory_mib, FIELD_LONG),
    FIELD(prefetch, FIELD_BOOL),
    FIELD(trace, FIELD_BOOL),
    FIELD(trace_first, FIELD_LONG),
    FIELD(trace_last, FIELD_LONG),
    FIELD(perfmodel, FIELD_STRING),
    FIELD(reduction, FIELD_STRING),
    FIELD(seed, FIELD_LONG),
    FIELD(lr, FIELD_DOUBLE),
    FIELD(momentum, FIELD_DOUBLE),
    FIELD(nodes, FIELD_LONG),
    FIELD(network, FIELD_STRING),
    FIELD(network_bps, FIELD_DOUBLE),
    FIELD(network_latency_s, FIELD_DOUBLE),
    FIELD(topology, FIELD_STRING),
    FIELD(mpi_progress_core, FIELD_STRING),
    FIELD(representative_ranks, FIELD_BOOL),
    FIELD(mpi_progress_phase, FIELD_DOUBLE),
    OBJECTS(groups, ngroups, group_fields, struct dahlsim_node_group),
    FIELD(partition, FIELD_STRING),
    FIELD(stage_cuts, FIELD_STRING),
    FIELD(stage_replicas, FIELD_LONG),
    FIELD(runtime_costs, FIELD_STRING),
    FIELD(submit_us_per_task, FIELD_DOUBLE),
    FIELD(input_copy_bytes_per_s, FIELD_DOUBLE),
    FIELD(sched_push_us, FIELD_DOUBLE),
    FIELD(worker_us, FIELD_DOUBLE),
    FIELD(point, FIELD_STRING),
    OBJECTS(jobs, njobs, job_fields, struct dahlsim_job),
    FIELD(job_order, FIELD_STRING),
    FIELD(job_contexts, FIELD_STRING),
    FIELD(job_window, FIELD_LONG),
    SEQUENCE(sequence, nsequence),
};

#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

/* 2^53: the largest integer a JSON number carries exactly. */
#define EXACT_MAX 9007199254740992.0

/* A number as JSON text that reads back as exactly v: the shortest of 15 to 17 significant digits that does.
 * (cJSON prints 15 and accepts what is merely close, which loses the last bits of a double, and of an integer
 * past 10^15.) */
static cJSON *exact_number(double v)
{
    char text[40];
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(text, sizeof(text), "%.*g", digits, v);
        if (strtod(text, NULL) == v)
            break;
    }
    return cJSON_CreateRaw(text);
}

static cJSON *field_json(const struct field *f, const void *at);

/* An object of the fields in table (n of them) read at base. */
static cJSON *object_json(const struct field *table, size_t n, const void *base)
{
    cJSON *o = cJSON_CreateObject();
    for (size_t i = 0; o != NULL && i < n; i++) {
        cJSON *item = field_json(&table[i], (const char *)base + table[i].offset);
        if (item == NULL || !cJSON_AddItemToObject(o, table[i].key, item)) {
            cJSON_Delete(item);
            cJSON_Delete(o);
            o = NULL;
        }
    }
    return o;
}

/* The array of an ARRAY field: count elements (the long before it in the record, given by the caller). */
static cJSON *array_json(const struct field *f, const void *at, long count)
{
    cJSON *a = cJSON_CreateArray();
    for (long i = 0; a != NULL && i < count; i++) {
        cJSON *item = f->type == FIELD_OBJECTS ? object_json(f->sub, f->nsub, (const char *)at + i * f->elem_size)
                                               : exact_number(((const int *)at)[i]);
        if (item == NULL || !cJSON_AddItemToArray(a, item)) {
            cJSON_Delete(item);
            cJSON_Delete(a);
            a = NULL;
        }
    }
    return a;
}

static cJSON *field_json(const struct field *f, const void *at)
{
    switch (f->type) {
    case FIELD_OBJECTS:
    case FIELD_SEQUENCE:
        return NULL; /* arrays need their count: array_json */
    case FIELD_STRING:
        return cJSON_CreateString(at);
    case FIELD_LONG:
        return exact_number((double)*(const long *)at);
    case FIELD_DOUBLE:
        return exact_number(*(const double *)at);
    case FIELD_BOOL:
        return cJSON_CreateBool(*(const bool *)at);
    }
    return NULL;
}

int dahlsim_experiment_save(const struct dahlsim_experiment *x, const char *path, char *err, size_t err_size)
{
    cJSON *root = cJSON_CreateObject();
    bool ok = root != NULL && cJSON_AddNumberToObject(root, "dahlsim_point", POINT_FORMAT) != NULL;
    for (size_t i = 0; ok && i < NFIELDS; i++) {
        const struct field *f = &fields[i];
        cJSON *item = f->type == FIELD_OBJECTS || f->type == FIELD_SEQUENCE
                          ? array_json(f, (const char *)x + f->offset, *(const long *)((const char *)x + f->count_offset))
                          : field_json(f, (const char *)x + f->offset);
        ok = item != NULL && cJSON_AddItemToObject(root, fields[i].key, item);
        if (!ok)
            cJSON_Delete(item);
    }
    int ret = -ENOMEM;
    if (ok)
        ret = dahlsim_json_save(root, path, err, err_size);
    else
        snprintf(err, err_size, "%s: out of memory while writing it", path);
    cJSON_Delete(root);
    return ret;
}

static bool field_set(const struct field *f, const cJSON *item, void *at, char *expected, size_t size);

/* One element of an ARRAY field from item into element i of the array at `at`. */
static bool element_set(const struct field *f, const cJSON *item, void *at, long i, char *expected, size_t size)
{
    if (f->type == FIELD_SEQUENCE) {
        static const struct field index = {"", FIELD_LONG, 0, sizeof(long), 0, NULL, 0, 0};
        long v;
        if (!field_set(&index, item, &v, expected, size) || v < 0 || v >= DAHLSIM_MAX_JOBS) {
            snprintf(expected, size, "job indices in [0, %d)", DAHLSIM_MAX_JOBS);
            return false;
        }
        ((int *)at)[i] = (int)v;
        return true;
    }
    char *element = (char *)at + (size_t)i * f->elem_size;
    if (!cJSON_IsObject(item) || cJSON_GetArraySize(item) != (int)f->nsub) {
        snprintf(expected, size, "objects with the %zu keys of %s", f->nsub, f->key);
        return false;
    }
    for (size_t k = 0; k < f->nsub; k++) {
        const cJSON *sub = cJSON_GetObjectItemCaseSensitive(item, f->sub[k].key);
        if (sub == NULL || !field_set(&f->sub[k], sub, element + f->sub[k].offset, expected, size)) {
            char inner[128];
            snprintf(inner, sizeof(inner), "%s", sub == NULL ? "present" : expected);
            snprintf(expected, size, "%s whose \"%s\" is %.80s", f->key, f->sub[k].key, inner);
            return false;
        }
    }
    return true;
}

/* An ARRAY field (its elements and its count at count_at). */
static bool array_set(const struct field *f, const cJSON *item, void *at, long *count_at, char *expected, size_t size)
{
    long max = (long)(f->size / (f->type == FIELD_OBJECTS ? f->elem_size : sizeof(int)));
    if (!cJSON_IsArray(item) || cJSON_GetArraySize(item) > max) {
        snprintf(expected, size, "an array of at most %ld elements", max);
        return false;
    }
    long n = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, item) {
        if (!element_set(f, e, at, n, expected, size))
            return false;
        n++;
    }
    *count_at = n;
    return true;
}

/* Sets the field at `at` from item; false, with what was expected in err, on a wrong type or value. */
static bool field_set(const struct field *f, const cJSON *item, void *at, char *expected, size_t size)
{
    switch (f->type) {
    case FIELD_OBJECTS:
    case FIELD_SEQUENCE:
        return false; /* arrays need their count: array_set */
    case FIELD_STRING:
        if (!cJSON_IsString(item) || strlen(item->valuestring) >= f->size) {
            snprintf(expected, size, "a string of at most %zu bytes", f->size - 1);
            return false;
        }
        memcpy(at, item->valuestring, strlen(item->valuestring) + 1);
        return true;
    case FIELD_LONG:
        if (!cJSON_IsNumber(item) || item->valuedouble != floor(item->valuedouble) ||
            fabs(item->valuedouble) > EXACT_MAX) {
            snprintf(expected, size, "an integer");
            return false;
        }
        *(long *)at = (long)item->valuedouble;
        return true;
    case FIELD_DOUBLE:
        if (!cJSON_IsNumber(item) || !isfinite(item->valuedouble)) {
            snprintf(expected, size, "a number");
            return false;
        }
        *(double *)at = item->valuedouble;
        return true;
    case FIELD_BOOL:
        if (!cJSON_IsBool(item)) {
            snprintf(expected, size, "true or false");
            return false;
        }
        *(bool *)at = cJSON_IsTrue(item);
        return true;
    }
    return false;
}

static const struct field *field_named(const char *key)
{
    for (size_t i = 0; i < NFIELDS; i++)
        if (strcmp(fields[i].key, key) == 0)
            return &fields[i];
    return NULL;
}

static int experiment_from_json(const char *path, const cJSON *root, struct dahlsim_experiment *x, char *err,
                                size_t err_size)
{
    const cJSON *format = cJSON_GetObjectItemCaseSensitive(root, "dahlsim_point");
    if (!cJSON_IsNumber(format) || format->valuedouble != POINT_FORMAT) {
        snprintf(err, err_size, "%s: \"dahlsim_point\": expected %d (an experiment written by this dahlsim)", path,
                 POINT_FORMAT);
        return -EINVAL;
    }
    const cJSON *item;
    cJSON_ArrayForEach(item, root) {
        if (strcmp(item->string, "dahlsim_point") != 0 && field_named(item->string) == NULL) {
            snprintf(err, err_size, "%s: \"%s\": unknown key", path, item->string);
            return -EINVAL;
        }
    }
    *x = (struct dahlsim_experiment){0};
    for (size_t i = 0; i < NFIELDS; i++) {
        const struct field *f = &fields[i];
        char expected[128];
        item = cJSON_GetObjectItemCaseSensitive(root, f->key);
        if (item == NULL) {
            snprintf(err, err_size, "%s: \"%s\" is missing", path, f->key);
            return -EINVAL;
        }
        bool array = f->type == FIELD_OBJECTS || f->type == FIELD_SEQUENCE;
        if (array ? !array_set(f, item, (char *)x + f->offset, (long *)((char *)x + f->count_offset), expected,
                               sizeof(expected))
                  : !field_set(f, item, (char *)x + f->offset, expected, sizeof(expected))) {
            snprintf(err, err_size, "%s: \"%s\": expected %s", path, f->key, expected);
            return -EINVAL;
        }
    }
    return 0;
}

int dahlsim_experiment_load(const char *path, struct dahlsim_experiment *x, char *err, size_t err_size)
{
    cJSON *root;
    char why[160];
    int ret = dahlsim_json_load(path, 1 << 20, &root, why, sizeof(why));
    if (ret != 0) {
        snprintf(err, err_size, "%s: %s", path, why);
        return ret;
    }
    if (!cJSON_IsObject(root)) {
        snprintf(err, err_size, "%s: expected a JSON object", path);
        ret = -EINVAL;
    } else {
        ret = experiment_from_json(path, root, x, err, err_size);
    }
    cJSON_Delete(root);
    return ret;
}

int dahlsim_node_group_dir(const struct dahlsim_experiment *x, const struct dahlsim_node_group *g, char *buf,
                           size_t size)
{
    const char *slash = strrchr(x->machine_dir, '/');
    int root = slash != NULL ? (int)(slash - x->machine_dir) : 1;
    int n = snprintf(buf, size, "%.*s/%s", root, slash != NULL ? x->machine_dir : ".", g->machine);
    return n >= 0 && (size_t)n < size ? 0 : -ENAMETOOLONG;
}

void dahlsim_experiment_take_group(struct dahlsim_experiment *x, const struct dahlsim_node_group *g)
{
    char dir[sizeof(x->machine_dir)];
    if (dahlsim_node_group_dir(x, g, dir, sizeof(dir)) == 0)
        memcpy(x->machine_dir, dir, sizeof(dir));
    snprintf(x->machine, sizeof(x->machine), "%s", g->machine);
    x->cpus = g->cpus;
    x->gpus = g->gpus;
    x->submit_us_per_task = g->submit_us_per_task;
    x->input_copy_bytes_per_s = g->input_copy_bytes_per_s;
    x->sched_push_us = g->sched_push_us;
    x->worker_us = g->worker_us;
}

void dahlsim_node_group_take_experiment(struct dahlsim_node_group *g, const struct dahlsim_experiment *x)
{
    g->cpus = x->cpus;
    g->gpus = x->gpus;
    g->submit_us_per_task = x->submit_us_per_task;
    g->input_copy_bytes_per_s = x->input_copy_bytes_per_s;
    g->sched_push_us = x->sched_push_us;
    g->worker_us = x->worker_us;
}

bool dahlsim_platform_counts(const char *machine_dir, const char *machine, long *ncpu, long *ngpu, char *path,
                            size_t size)
{
    if (snprintf(path, size, "%s/sampling/bus/%s.platform.v4.xml", machine_dir, machine) >= (int)size)
        return false;
    char *xml = dahlsim_read_text(path, SIZE_MAX);
    if (xml == NULL)
        return false;
    *ncpu = *ngpu = 0;
    for (const char *p = xml; (p = strstr(p, "<host")) != NULL; p++) {
        const char *id = strstr(p, "id=");
        const char *end = strchr(p, '>');
        if (id == NULL || end == NULL || id > end)
            continue;
        id += 4; /* past id=" or id=' */
        *ncpu += strncmp(id, "CPU", 3) == 0;
        *ngpu += strncmp(id, "CUDA", 4) == 0;
    }
    free(xml);
    return true;
}
