/* What validate reads back: a run's figures from its results.json, and --natives DIR, the native runs of an
 * earlier report (DIR/fidelity.json, DIR/native/NN-R/results.json). See dahlsim_validate.h. */
#include "dahlsim_validate.h"

#include "dahlsim_validate_report.h"

#include "dahlsim_fs.h"
#include "dahlsim_interval.h"
#include "dahlsim_probe.h"
#include "dahlsim_util.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sum over the steps longer than twice the median step of what they take beyond the median: stalls of whole
 * steps (a thread descheduled for a timeslice natively), not a slower body. */
static double step_stalls(const cJSON *times)
{
    int n = cJSON_GetArraySize(times);
    if (n <= 0)
        return 0;
    double *t = malloc((size_t)n * sizeof(*t));
    if (t == NULL)
        return NAN;
    int k = 0;
    const cJSON *x;
    cJSON_ArrayForEach(x, times) t[k++] = cJSON_IsNumber(x) ? x->valuedouble : 0;
    double median = dahlsim_median(t, (size_t)n), stall = 0;
    for (int i = 0; i < n; i++)
        stall += t[i] > 2 * median ? t[i] - median : 0;
    free(t);
    return stall;
}

struct figures dahlsim_validate_read_figures(const char *dir)
{
    struct figures f = {NAN, 0, 0, 0, NAN, NAN};
    char path[PATH_MAX + 32];
    if (snprintf(path, sizeof(path), "%s/results.json", dir) >= (int)sizeof(path))
        return f;
    cJSON *r = dahlsim_read_json(path);
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(r, "makespan_s");
    f.makespan_s = cJSON_IsNumber(m) ? m->valuedouble : NAN;
    f.stall_s = step_stalls(cJSON_GetObjectItemCaseSensitive(r, "iteration_times_s"));
    struct dahlsim_prediction pred; /* a simulation's interval; NAN where unknown, or a native run */
    dahlsim_prediction_of(r, &pred);
    f.lo_s = pred.makespan_lo;
    f.hi_s = pred.makespan_hi;
    const cJSON *w;
    cJSON_ArrayForEach(w, cJSON_GetObjectItemCaseSensitive(r, "workers_detail"))
    {
        const cJSON *busy = cJSON_GetObjectItemCaseSensitive(w, "busy_s");
        const cJSON *tasks = cJSON_GetObjectItemCaseSensitive(w, "tasks");
        f.busy_s += cJSON_IsNumber(busy) ? busy->valuedouble : 0;
        f.tasks += cJSON_IsNumber(tasks) ? (long)tasks->valuedouble : 0;
    }
    cJSON_Delete(r);
    return f;
}

/* --natives DIR: what an earlier report (DIR/fidelity.json, DIR/native/NN-R/results.json) holds, read back. */
struct natives_doc {
    const char *path; /* DIR/fidelity.json, for the errors */
    char field[96];   /* the path of the object being read ("" at the top) */
};

/* The number at key of obj, within [lo, hi] (and whole where it is a count), into *v; false after the error
 * line naming the file and d->field (set by the caller to the path of obj). */
static bool natives_number(struct natives_doc *d, const cJSON *obj, const char *key, double lo, double hi,
                           bool count, double *v)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(obj, key);
    char field[160], expected[96];
    snprintf(field, sizeof(field), "%s%s%s", d->field, d->field[0] != '\0' ? "." : "", key);
    if (!cJSON_IsNumber(x) || !(x->valuedouble >= lo && x->valuedouble <= hi) ||
        (count && x->valuedouble != floor(x->valuedouble))) {
        snprintf(expected, sizeof(expected), "%s in [%g, %g] (a report dahlsim validate wrote)",
                 count ? "an integer" : "a number", lo, hi);
        dahlsim_validate_setups_error(d->path, field, x, expected);
        return false;
    }
    *v = x->valuedouble;
    return true;
}

/* The string at key of obj into out (size bytes); false after the error line. */
static bool natives_string(struct natives_doc *d, const cJSON *obj, const char *key, char *out, size_t size)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(obj, key);
    char field[160];
    snprintf(field, sizeof(field), "%s.%s", d->field, key);
    if (!cJSON_IsString(x) || x->valuestring[0] == '\0' || strlen(x->valuestring) >= size) {
        dahlsim_validate_setups_error(d->path, field, x, "a non-empty string (a report dahlsim validate wrote)");
        return false;
    }
    snprintf(out, size, "%s", x->valuestring);
    return true;
}

/* Setup i of the report (its row) into validate_setups[i] and its runs into n; the busy time and step stalls from
 * the native run's own results.json. False after the error line. */
static bool natives_setup(struct natives_doc *d, const cJSON *row, size_t i, long repeats, const char *dir,
                          struct native_figures *n)
{
    struct setup *s = &validate_setups[i];
    double v[6];
    const char *keys[] = {"samples", "batch", "cpus", "gpus", "pipeline_depth", "grain"};
    const double hi[] = {1e7, 65536, 64, 8, 64, 65536};
    snprintf(d->field, sizeof(d->field), "setups[%zu]", i);
    for (int k = 0; k < 6; k++)
        if (!natives_number(d, row, keys[k], k == 3 ? 0 : 1, hi[k], true, &v[k]))
            return false;
    if (!natives_string(d, row, "setup", s->name, sizeof(s->name)) ||
        !natives_string(d, row, "dataset", s->dataset, sizeof(s->dataset)) ||
        !natives_string(d, row, "scheduler", s->sched, sizeof(s->sched)))
        return false;
    s->samples = (long)v[0];
    s->batch = (long)v[1];
    s->ncpu = (long)v[2];
    s->ngpu = (long)v[3];
    s->depth = (long)v[4];
    s->grain = (long)v[5];
    const cJSON *runs = cJSON_GetObjectItemCaseSensitive(row, "runs");
    if (!cJSON_IsArray(runs) || cJSON_GetArraySize(runs) != repeats) {
        char field[128], expected[96];
        snprintf(field, sizeof(field), "setups[%zu].runs", i);
        snprintf(expected, sizeof(expected), "a list of %ld runs (the report's \"repeats\")", repeats);
        dahlsim_validate_setups_error(d->path, field, runs, expected);
        return false;
    }
    for (long r = 0; r < repeats; r++) {
        const cJSON *run = cJSON_GetArrayItem(runs, (int)r);
        double slow, latency, far;
        snprintf(d->field, sizeof(d->field), "setups[%zu].runs[%ld]", i, r);
        if (!natives_number(d, run, "makespan_s", 1e-9, 1e9, false, &n->times[i][r]) ||
            !natives_number(d, run, "probe_slower", -1, 1e9, false, &slow) ||
            !natives_number(d, run, "core_latency_ns", 0, 1e12, false, &latency) ||
            !natives_number(d, run, "latency_ratio", 0, 1e12, false, &far))
            return false;
        double reruns = 0; /* absent from reports written before it was recorded */
        if (cJSON_GetObjectItemCaseSensitive(run, "reruns") != NULL &&
            !natives_number(d, run, "reruns", 0, 10, true, &reruns))
            return false;
        n->reruns[i][r] = (int)reruns;
        n->gflops[i][r] = n->share[i][r] = NAN; /* absent from reports written before they were recorded */
        if ((cJSON_GetObjectItemCaseSensitive(run, "probe_gflops") != NULL &&
             !natives_number(d, run, "probe_gflops", 0, 1e9, false, &n->gflops[i][r])) ||
            (cJSON_GetObjectItemCaseSensitive(run, "interference_share") != NULL &&
             !natives_number(d, run, "interference_share", 0, 1e3, false, &n->share[i][r])))
            return false;
        n->slow[i][r] = slow;
        n->far[i][r] = far;
        n->probe[i][r].latency_ns = latency;
        char run_dir[PATH_MAX + 64];
        snprintf(run_dir, sizeof(run_dir), "%s/native/%02zu-%ld", dir, i, r);
        struct figures f = dahlsim_validate_read_figures(run_dir);
        if (isnan(f.makespan_s)) {
            dahlsim_error("validate: --natives %s: %s/results.json: expected the native run of \"%s\" (run %ld), "
                          "not found or unreadable", dir, run_dir, s->name, r + 1);
            return false;
        }
        n->busies[i][r] = f.busy_s;
        n->stalls[i][r] = f.stall_s;
    }
    return true;
}

/* --natives DIR: validate_setups[], the repeats and ranks (into *repeats, *nodes), the native figures and the
 * session's probes (into n) from DIR's report; *threshold: the threshold it judged at. Returns 0, or -EINVAL
 * after the error line. */
int dahlsim_validate_load_natives(const char *dir, long *repeats, long *nodes, long *reruns, double *threshold, char *commit,
                        size_t commit_size, struct native_figures *n)
{
    char path[PATH_MAX + 32], err[PATH_MAX + 256];
    snprintf(path, sizeof(path), "%s/fidelity.json", dir);
    cJSON *doc = NULL;
    if (dahlsim_json_load(path, 16 << 20, &doc, err, sizeof(err)) != 0) {
        dahlsim_error("validate: --natives: %s: %s", path, err); /* err does not name the file */
        fprintf(stderr, "hint: --natives takes the --out directory of an earlier dahlsim validate\n");
        return -EINVAL;
    }
    struct natives_doc d = {.path = path};
    double v[4];
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(doc, "setups");
    bool ok = natives_number(&d, doc, "repeats", 1, DAHLSIM_VALIDATE_MAX_REPEATS, true, &v[0]) &&
              natives_number(&d, doc, "nodes", 0, 64, true, &v[1]) &&
              natives_number(&d, doc, "noisy_threshold", 1e-6, 0.99, false, &v[2]) &&
              natives_number(&d, doc, "core_latency_shortest_ns", 0, 1e12, false, &v[3]);
    if (ok && (!cJSON_IsArray(rows) || cJSON_GetArraySize(rows) < 1 ||
               cJSON_GetArraySize(rows) > DAHLSIM_VALIDATE_MAX_SETUPS)) {
        snprintf(err, sizeof(err), "a list of 1 to %d setups (a report dahlsim validate wrote)",
                 DAHLSIM_VALIDATE_MAX_SETUPS);
        dahlsim_validate_setups_error(path, "setups", rows, err);
        ok = false;
    }
    const cJSON *gflops = cJSON_GetObjectItemCaseSensitive(doc, "probe_fastest_gflops");
    int cores = cJSON_GetArraySize(gflops);
    if (ok && (!cJSON_IsArray(gflops) || cores < 1 || cores > DAHLSIM_PROBE_MAX_CORES)) {
        snprintf(err, sizeof(err), "a list of 1 to %d numbers (a report dahlsim validate wrote)",
                 DAHLSIM_PROBE_MAX_CORES);
        dahlsim_validate_setups_error(path, "probe_fastest_gflops", gflops, err);
        ok = false;
    }
    memset(&n->best, 0, sizeof(n->best));
    d.field[0] = '\0';
    for (int c = 0; ok && c < cores; c++) {
        const cJSON *g = cJSON_GetArrayItem(gflops, c);
        n->best.gflops[c] = cJSON_IsNumber(g) ? g->valuedouble : 0;
    }
    double most = (double)*reruns; /* the reruns a noisy run was allowed: absent from older reports */
    if (ok && cJSON_GetObjectItemCaseSensitive(doc, "reruns") != NULL)
        ok = natives_number(&d, doc, "reruns", 0, 10, true, &most);
    validate_nsetups = 0;
    if (!ok) {
        cJSON_Delete(doc);
        return -EINVAL;
    }
    *reruns = (long)most;
    n->cores = cores;
    n->best.latency_ns = v[3];
    *repeats = (long)v[0];
    *nodes = (long)v[1];
    *threshold = v[2];
    for (int i = 0; ok && i < cJSON_GetArraySize(rows); i++, validate_nsetups++)
        ok = natives_setup(&d, cJSON_GetArrayItem(rows, i), (size_t)i, *repeats, dir, n);
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(doc, "commit");
    snprintf(commit, commit_size, "%s", cJSON_IsString(c) ? c->valuestring : "not recorded");
    cJSON_Delete(doc);
    return ok ? 0 : -EINVAL;
}

long dahlsim_validate_natives_load(const char *dir)
{
    static struct native_figures n;
    long repeats, nodes, reruns = 2;
    double threshold;
    char commit[64];
    return dahlsim_validate_load_natives(dir, &repeats, &nodes, &reruns, &threshold, commit, sizeof(commit), &n) == 0 ? (long)validate_nsetups
                                                                                                      : -EINVAL;
}
