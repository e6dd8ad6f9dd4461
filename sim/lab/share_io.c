/* The GPU-sharing emulator's files (see dahlsim_share.h): the dahlsim-share-1 input, loaded with every key
 * and value checked and each error naming the file and the field, its writer, and the result as JSON. */
#include "share_internal.h"

#include "dahlsim_fs.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SHARE_MAX_EXACT 9007199254740992.0 /* 2^53: larger byte counts are not exact in JSON */

struct where {
    const char *path;
    char at[96]; /* the object being read: "" (the top), "\"jobs\"[2]", ... */
    char *err;
    size_t err_size;
};

static bool fail(const struct where *w, const char *key, const char *expected)
{
    snprintf(w->err, w->err_size, "%s: %s%s\"%s\": expected %s", w->path, w->at, w->at[0] != '\0' ? "." : "", key,
             expected);
    return false;
}

/* Every key of obj is one of known[0 .. n-1]. */
static bool known_keys(const struct where *w, const cJSON *obj, const char *const *known, size_t n)
{
    const cJSON *key;
    cJSON_ArrayForEach(key, obj)
    {
        bool ok = false;
        for (size_t k = 0; k < n && !ok; k++)
            ok = strcmp(key->string, known[k]) == 0;
        if (!ok) {
            size_t used = (size_t)snprintf(w->err, w->err_size, "%s: %s%sunknown key \"%s\" (expected", w->path,
                                           w->at, w->at[0] != '\0' ? ": " : "", key->string);
            for (size_t k = 0; k < n && used < w->err_size; k++)
                used += (size_t)snprintf(w->err + used, w->err_size - used, "%s %s", k > 0 ? "," : "", known[k]);
            if (used < w->err_size)
                snprintf(w->err + used, w->err_size - used, ")");
            return false;
        }
    }
    return true;
}

/* obj[key], a number in [min, max] (an integer when integral); absent: *out = def, or an error when
 * required. */
static bool number(const struct where *w, const cJSON *obj, const char *key, bool required, bool integral,
                   double min, double max, double def, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    char expected[128];
    snprintf(expected, sizeof(expected), "%s in [%g, %g]", integral ? "an integer" : "a number", min, max);
    if (v == NULL) {
        *out = def;
        return !required || fail(w, key, expected);
    }
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < min || v->valuedouble > max ||
        (integral && v->valuedouble != floor(v->valuedouble)))
        return fail(w, key, expected);
    *out = v->valuedouble;
    return true;
}

static bool load_tensor(struct where *w, const cJSON *t, struct dahlsim_share_tensor *out)
{
    static const char *const known[] = {"bytes", "written", "name"};
    double bytes;
    if (!cJSON_IsObject(t)) {
        snprintf(w->err, w->err_size, "%s: %s: expected {\"bytes\": N, \"written\": true|false}", w->path, w->at);
        return false;
    }
    if (!known_keys(w, t, known, 3) || !number(w, t, "bytes", true, true, 1, SHARE_MAX_EXACT, 0, &bytes))
        return false;
    const cJSON *written = cJSON_GetObjectItemCaseSensitive(t, "written");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(t, "name");
    if (!cJSON_IsBool(written))
        return fail(w, "written", "true or false");
    if (name != NULL && (!cJSON_IsString(name) || strlen(name->valuestring) >= sizeof(out->name)))
        return fail(w, "name", "a string of at most 47 bytes");
    *out = (struct dahlsim_share_tensor){.bytes = (uint64_t)bytes, .written = cJSON_IsTrue(written)};
    if (name != NULL)
        snprintf(out->name, sizeof(out->name), "%s", name->valuestring);
    return true;
}

static bool load_job(struct where *w, const cJSON *o, int index, struct dahlsim_share_job *job)
{
    static const char *const known[] = {"name", "steps", "start_s", "priority", "batch", "compute_s", "host_s",
                                        "tensors"};
    if (!cJSON_IsObject(o)) {
        snprintf(w->err, w->err_size, "%s: %s: expected a job object", w->path, w->at);
        return false;
    }
    if (!known_keys(w, o, known, sizeof(known) / sizeof(known[0])))
        return false;
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(o, "name");
    if (!cJSON_IsString(name) || name->valuestring[0] == '\0' || strlen(name->valuestring) >= sizeof(job->name))
        return fail(w, "name", "a non-empty string of at most 63 bytes");
    snprintf(job->name, sizeof(job->name), "%s", name->valuestring);
    double steps, priority, batch;
    if (!number(w, o, "steps", true, true, 1, 1e7, 0, &steps) ||
        !number(w, o, "start_s", false, false, 0, 1e12, 0, &job->start_s) ||
        !number(w, o, "priority", false, true, -1e9, 1e9, 0, &priority) ||
        !number(w, o, "batch", false, true, 0, 1e9, 0, &batch) ||
        !number(w, o, "compute_s", true, false, 0, 1e12, 0, &job->compute_s) ||
        !number(w, o, "host_s", false, false, 0, 1e12, 0, &job->host_s))
        return false;
    job->steps = (int)steps;
    job->priority = (int)priority;
    job->batch = (int)batch;
    const cJSON *tensors = cJSON_GetObjectItemCaseSensitive(o, "tensors");
    int n = cJSON_GetArraySize(tensors);
    if (!cJSON_IsArray(tensors) || n < 1 || n > 100000)
        return fail(w, "tensors", "an array of 1 to 100000 {\"bytes\": N, \"written\": true|false}");
    job->tensors = calloc((size_t)n, sizeof(*job->tensors));
    if (job->tensors == NULL) {
        snprintf(w->err, w->err_size, "%s: out of memory", w->path);
        return false;
    }
    const cJSON *t;
    cJSON_ArrayForEach(t, tensors)
    {
        snprintf(w->at, sizeof(w->at), "\"jobs\"[%d].\"tensors\"[%d]", index % DAHLSIM_SHARE_MAX_JOBS, job->ntensors % 100000);
        if (!load_tensor(w, t, &job->tensors[job->ntensors]))
            return false;
        job->ntensors++;
    }
    return true;
}

static bool load_link(struct where *w, const cJSON *doc, struct dahlsim_share *s)
{
    static const char *const known[] = {"bandwidth_bytes_per_s", "latency_s"};
    const cJSON *link = cJSON_GetObjectItemCaseSensitive(doc, "link");
    if (!cJSON_IsObject(link))
        return fail(w, "link", "{\"bandwidth_bytes_per_s\": x, \"latency_s\": y}");
    snprintf(w->at, sizeof(w->at), "\"link\"");
    bool ok = known_keys(w, link, known, 2) &&
              number(w, link, "bandwidth_bytes_per_s", true, false, 1e-300, 1e300, 0, &s->bandwidth_bytes_per_s) &&
              number(w, link, "latency_s", true, false, 0, 1e6, 0, &s->latency_s);
    w->at[0] = '\0';
    return ok;
}

static bool load_memory(struct where *w, const cJSON *doc, struct dahlsim_share *s)
{
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(doc, "gpu_memory_bytes");
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(doc, "gpu_memory_mib");
    double v;
    if ((b == NULL) == (m == NULL))
        return fail(w, "gpu_memory_bytes", "either it or \"gpu_memory_mib\" (one of them)");
    if (b != NULL) {
        if (!number(w, doc, "gpu_memory_bytes", true, true, 1, SHARE_MAX_EXACT, 0, &v))
            return false;
        s->memory_bytes = (uint64_t)v;
    } else {
        if (!number(w, doc, "gpu_memory_mib", true, false, 1.0 / 1048576.0, SHARE_MAX_EXACT / 1048576.0, 0, &v))
            return false;
        s->memory_bytes = (uint64_t)llround(v * 1048576.0);
    }
    return true;
}

static bool load_doc(struct where *w, const cJSON *doc, struct dahlsim_share *s)
{
    static const char *const known[] = {"format", "gpu_memory_bytes", "gpu_memory_mib", "link", "jobs", "source"};
    if (!cJSON_IsObject(doc)) {
        snprintf(w->err, w->err_size, "%s: expected a dahlsim-share-1 JSON object", w->path);
        return false;
    }
    if (!known_keys(w, doc, known, sizeof(known) / sizeof(known[0])))
        return false;
    const cJSON *format = cJSON_GetObjectItemCaseSensitive(doc, "format");
    const cJSON *source = cJSON_GetObjectItemCaseSensitive(doc, "source");
    const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(doc, "jobs");
    if (!cJSON_IsString(format) || strcmp(format->valuestring, "dahlsim-share-1") != 0)
        return fail(w, "format", "\"dahlsim-share-1\"");
    if (source != NULL && !cJSON_IsString(source))
        return fail(w, "source", "a string");
    if (source != NULL)
        snprintf(s->source, sizeof(s->source), "%s", source->valuestring);
    if (!load_memory(w, doc, s) || !load_link(w, doc, s))
        return false;
    int n = cJSON_GetArraySize(jobs);
    if (!cJSON_IsArray(jobs) || n < 1 || n > DAHLSIM_SHARE_MAX_JOBS) {
        char expected[64];
        snprintf(expected, sizeof(expected), "an array of 1 to %d jobs", DAHLSIM_SHARE_MAX_JOBS);
        return fail(w, "jobs", expected);
    }
    const cJSON *o;
    cJSON_ArrayForEach(o, jobs)
    {
        snprintf(w->at, sizeof(w->at), "\"jobs\"[%d]", s->njobs);
        bool ok = load_job(w, o, s->njobs, &s->jobs[s->njobs]);
        s->njobs++; /* its tensors are freed with s */
        if (!ok)
            return false;
        for (int j = 0; j < s->njobs - 1; j++)
            if (strcmp(s->jobs[j].name, s->jobs[s->njobs - 1].name) == 0)
                return fail(w, "name", "a name no other job has");
    }
    return true;
}

int share_json_read(const char *path, struct cJSON **doc, char *err, size_t err_size)
{
    char why[512];
    int ret = dahlsim_json_load(path, 256u << 20, doc, why, sizeof(why));
    if (ret != 0)
        snprintf(err, err_size, "%s: %s", path, why);
    return ret;
}

int dahlsim_share_load(const char *path, struct dahlsim_share *s, char *err, size_t err_size)
{
    memset(s, 0, sizeof(*s));
    cJSON *doc = NULL;
    char why[512];
    int ret = share_json_read(path, &doc, err, err_size);
    if (ret != 0)
        return ret;
    struct where w = {.path = path, .err = err, .err_size = err_size};
    ret = load_doc(&w, doc, s) ? 0 : -EINVAL;
    const char *key = cJSON_GetObjectItemCaseSensitive(doc, "gpu_memory_mib") != NULL ? "gpu_memory_mib"
                                                                                     : "gpu_memory_bytes";
    char field[sizeof(why)];
    snprintf(field, sizeof(field), "%s: \"%s\"", path, key);
    cJSON_Delete(doc);
    if (ret == 0 && (ret = dahlsim_share_check(s, field, why, sizeof(why))) != 0) {
        if (strncmp(why, path, strlen(path)) == 0)
            snprintf(err, err_size, "%s", why);
        else
            snprintf(err, err_size, "%s: %s", path, why);
    }
    if (ret != 0)
        dahlsim_share_fini(s);
    return ret;
}

static cJSON *job_json(const struct dahlsim_share_job *job)
{
    cJSON *o = cJSON_CreateObject(), *ts = cJSON_CreateArray();
    cJSON_AddStringToObject(o, "name", job->name);
    cJSON_AddNumberToObject(o, "steps", job->steps);
    cJSON_AddNumberToObject(o, "start_s", job->start_s);
    cJSON_AddNumberToObject(o, "priority", job->priority);
    cJSON_AddNumberToObject(o, "batch", job->batch);
    cJSON_AddNumberToObject(o, "compute_s", job->compute_s);
    cJSON_AddNumberToObject(o, "host_s", job->host_s);
    cJSON_AddItemToObject(o, "tensors", ts);
    for (int i = 0; i < job->ntensors; i++) {
        cJSON *t = cJSON_CreateObject();
        cJSON_AddItemToArray(ts, t);
        if (job->tensors[i].name[0] != '\0')
            cJSON_AddStringToObject(t, "name", job->tensors[i].name);
        cJSON_AddNumberToObject(t, "bytes", (double)job->tensors[i].bytes);
        cJSON_AddBoolToObject(t, "written", job->tensors[i].written);
    }
    return o;
}

int dahlsim_share_save(const struct dahlsim_share *s, const char *path, char *err, size_t err_size)
{
    cJSON *doc = cJSON_CreateObject(), *link = cJSON_CreateObject(), *jobs = cJSON_CreateArray();
    cJSON_AddStringToObject(doc, "format", "dahlsim-share-1");
    if (s->source[0] != '\0')
        cJSON_AddStringToObject(doc, "source", s->source);
    cJSON_AddNumberToObject(doc, "gpu_memory_bytes", (double)s->memory_bytes);
    cJSON_AddItemToObject(doc, "link", link);
    cJSON_AddNumberToObject(link, "bandwidth_bytes_per_s", s->bandwidth_bytes_per_s);
    cJSON_AddNumberToObject(link, "latency_s", s->latency_s);
    cJSON_AddItemToObject(doc, "jobs", jobs);
    for (int j = 0; j < s->njobs; j++)
        cJSON_AddItemToArray(jobs, job_json(&s->jobs[j]));
    int ret = dahlsim_json_save(doc, path, err, err_size);
    cJSON_Delete(doc);
    return ret;
}

static void job_result_json(cJSON *o, const struct dahlsim_share_job_result *r)
{
    cJSON_AddNumberToObject(o, "end_s", r->end_s);
    cJSON_AddNumberToObject(o, "steps", (double)r->steps);
    cJSON_AddNumberToObject(o, "samples", (double)r->samples);
    cJSON_AddNumberToObject(o, "compute_s", r->compute_s);
    cJSON_AddNumberToObject(o, "wait_for_data_s", r->wait_for_data_s);
    cJSON_AddNumberToObject(o, "h2d_bytes", (double)r->h2d_bytes);
    cJSON_AddNumberToObject(o, "h2d_count", (double)r->h2d_count);
    cJSON_AddNumberToObject(o, "d2h_bytes", (double)r->d2h_bytes);
    cJSON_AddNumberToObject(o, "d2h_count", (double)r->d2h_count);
    cJSON_AddNumberToObject(o, "evictions", (double)r->evictions);
}

cJSON *dahlsim_share_result_json(const struct dahlsim_share *s, const struct dahlsim_share_conf *conf,
                                 const char *order, const struct dahlsim_share_result *r,
                                 const struct dahlsim_share_ga_stats *ga_stats)
{
    cJSON *o = cJSON_CreateObject(), *total = cJSON_CreateObject(), *jobs = cJSON_CreateArray();
    if (o == NULL || total == NULL || jobs == NULL) {
        cJSON_Delete(o);
        cJSON_Delete(total);
        cJSON_Delete(jobs);
        return NULL;
    }
    cJSON_AddStringToObject(o, "format", "dahlsim-share-result-1");
    cJSON_AddStringToObject(o, "order_kind", order);
    cJSON_AddStringToObject(o, "policy", dahlsim_share_policy_name(conf->policy));
    cJSON_AddBoolToObject(o, "prefetch", conf->prefetch);
    cJSON_AddNumberToObject(o, "window", conf->window);
    cJSON_AddNumberToObject(o, "gpu_memory_bytes", (double)s->memory_bytes);
    cJSON_AddNumberToObject(o, "makespan_s", r->makespan_s);
    cJSON_AddNumberToObject(o, "gpu_busy_fraction", r->busy_fraction);
    cJSON_AddNumberToObject(o, "gpu_wait_for_data_s", r->wait_for_data_s);
    if (ga_stats != NULL) {
        cJSON *ga = cJSON_CreateObject();
        cJSON_AddItemToObject(o, "ga", ga);
        cJSON_AddNumberToObject(ga, "generations", ga_stats->generations);
        cJSON_AddNumberToObject(ga, "evaluations", (double)ga_stats->evaluations);
    }
    cJSON_AddItemToObject(o, "total", total);
    job_result_json(total, &r->total);
    cJSON_AddItemToObject(o, "jobs", jobs);
    for (int j = 0; j < r->njobs; j++) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddItemToArray(jobs, x);
        cJSON_AddStringToObject(x, "name", s->jobs[j].name);
        job_result_json(x, &r->jobs[j]);
    }
    cJSON_AddItemToObject(o, "order", cJSON_CreateIntArray(r->order, r->norder));
    return o;
}
