/* The GPU-sharing view of a sweep (dahlsim_sweep.h): for a "workloads" scenario swept over gpu_memory_mib
 * or job_count, each point's oversubscription (the jobs' footprint over the limit) and what it cost, one
 * series per job order and prefetch setting (and, when the number of jobs is swept, per limit). The
 * footprint is measured, not assumed: StarPU's largest peak GPU use among the points that ran the same
 * number of jobs without a limit (one figure per number of jobs, so that a limit has one oversubscription
 * whatever the order). */
#include "dahlsim_sweep.h"

#include "dahlsim_fs.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sharing_row {
    char series[64]; /* "ORDER prefetch" or "ORDER no-prefetch", then " at L MiB" or " no limit" when by_jobs */
    double jobs, limit_mib, makespan_s, h2d_mib, d2h_mib, evictions, peak_mib;
};

static double number_or_nan(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* The rows of dir/results.jsonl that ran several jobs; *n of them (NULL and 0 when none or unreadable).
 * by_jobs: the number of jobs is the x axis, so the limit goes into the series. */
static struct sharing_row *read_rows(const char *dir, bool by_jobs, size_t *n)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s/results.jsonl", dir);
    *n = 0;
    FILE *in = fopen(path, "r");
    if (in == NULL)
        return NULL;
    struct sharing_row *rows = NULL;
    size_t cap = 0, lcap = 0;
    char *line = NULL;
    while (getline(&line, &lcap, in) > 0) {
        cJSON *o = cJSON_Parse(line);
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(o, "params");
        const cJSON *order = cJSON_GetObjectItemCaseSensitive(p, "job_order");
        const cJSON *prefetch = cJSON_GetObjectItemCaseSensitive(p, "prefetch");
        if (cJSON_IsString(order) && *n == cap) {
            cap = cap ? 2 * cap : 64;
            struct sharing_row *grown = realloc(rows, cap * sizeof(*rows));
            if (grown == NULL) {
                cJSON_Delete(o);
                break;
            }
            rows = grown;
        }
        if (cJSON_IsString(order)) {
            struct sharing_row *r = &rows[(*n)++];
            r->limit_mib = number_or_nan(p, "gpu_memory_mib");
            char limit[32] = "";
            if (by_jobs && r->limit_mib > 0)
                snprintf(limit, sizeof(limit), " at %.0f MiB", r->limit_mib);
            snprintf(r->series, sizeof(r->series), "%s %s%s", order->valuestring,
                     cJSON_IsTrue(prefetch) ? "prefetch" : "no-prefetch",
                     by_jobs ? (r->limit_mib > 0 ? limit : " no limit") : "");
            r->jobs = number_or_nan(p, "jobs");
            r->makespan_s = number_or_nan(o, "makespan_s");
            r->h2d_mib = number_or_nan(o, "h2d_bytes") / 1048576.0;
            r->d2h_mib = number_or_nan(o, "d2h_bytes") / 1048576.0;
            r->evictions = number_or_nan(o, "evictions");
            r->peak_mib = number_or_nan(o, "gpu_peak_bytes") / 1048576.0;
        }
        cJSON_Delete(o);
    }
    free(line);
    fclose(in);
    return rows;
}

static int by_series_then_jobs_then_limit(const void *a, const void *b)
{
    const struct sharing_row *x = a, *y = b;
    int c = strcmp(x->series, y->series);
    if (c != 0)
        return c;
    if (x->jobs != y->jobs)
        return (x->jobs > y->jobs) - (x->jobs < y->jobs);
    return (x->limit_mib > y->limit_mib) - (x->limit_mib < y->limit_mib);
}

/* The footprint of `jobs` jobs: the largest peak GPU use (MiB) of the points that ran that many without a
 * limit, or NAN when none. */
static double footprint(const struct sharing_row *rows, size_t n, double jobs)
{
    double fp = NAN;
    for (size_t i = 0; i < n; i++)
        if (rows[i].jobs == jobs && !(rows[i].limit_mib > 0) && !(rows[i].peak_mib <= fp))
            fp = rows[i].peak_mib;
    return fp;
}

static int write_table(const char *csv, const struct sharing_row *rows, size_t n)
{
    char tmp[PATH_MAX + 64];
    snprintf(tmp, sizeof(tmp), "%s.tmp", csv);
    FILE *f = fopen(tmp, "w");
    if (f == NULL)
        return -errno;
    fputs("series,gpu_memory_mib,footprint_mib,oversubscription,makespan_s,h2d_mib,d2h_mib,evictions,jobs\n", f);
    for (size_t i = 0; i < n; i++) {
        double fp = footprint(rows, n, rows[i].jobs);
        double over = rows[i].limit_mib > 0 ? fp / rows[i].limit_mib : 0.0;
        fprintf(f, "%s,%.0f,%.1f,%.3f,%.9g,%.3f,%.3f,%.0f,%.0f\n", rows[i].series,
                rows[i].limit_mib > 0 ? rows[i].limit_mib : 0.0, fp, over, rows[i].makespan_s, rows[i].h2d_mib,
                rows[i].d2h_mib, rows[i].evictions, rows[i].jobs);
    }
    int ret = fclose(f) != 0 ? -errno : 0;
    if (ret == 0 && rename(tmp, csv) != 0)
        ret = -errno;
    return ret;
}

int dahlsim_sweep_write_sharing(const char *dir, const struct dahlsim_scenario *s)
{
    size_t nkeys, n;
    const char *const *keys = dahlsim_scenario_sweep_keys(s, &nkeys);
    bool memory = false, by_jobs = false;
    for (size_t k = 0; k < nkeys; k++) {
        memory = memory || strcmp(keys[k], "gpu_memory_mib") == 0;
        by_jobs = by_jobs || strcmp(keys[k], "job_count") == 0;
    }
    if (!(memory || by_jobs) || dahlsim_scenario_points(s) == 0 || dahlsim_scenario_point(s, 0)->njobs == 0)
        return 0;
    struct sharing_row *rows = read_rows(dir, by_jobs, &n);
    if (n == 0) {
        free(rows);
        return 0;
    }
    qsort(rows, n, sizeof(*rows), by_series_then_jobs_then_limit);
    char plots[PATH_MAX + 16], csv[PATH_MAX + 48];
    snprintf(plots, sizeof(plots), "%s/plots", dir);
    snprintf(csv, sizeof(csv), "%s/gpu-sharing.csv", plots);
    int ret = dahlsim_make_dirs(plots);
    if (ret == 0)
        ret = write_table(csv, rows, n);
    free(rows);
    if (ret != 0)
        return 1;
    const char *metrics[] = {"makespan_s", "h2d_mib"};
    const char *labels[] = {"makespan (s, simulated)", "host -> GPU (MiB)"};
    const int mcol[] = {5, 6};
    int failures = 0;
    for (int m = 0; m < 2; m++) {
        char script[PATH_MAX + 64];
        snprintf(script, sizeof(script), "%s/gpu-sharing-%s.gp", plots, metrics[m]);
        FILE *f = fopen(script, "w");
        if (f == NULL)
            return 1;
        /* One line per series: gnuplot filters the rows by the series column (its spaces made '_'). */
        fprintf(f,
                "# %s against %s, one line per job order and prefetch%s (from gpu-sharing.csv)\n"
                "set datafile separator ','\n"
                "set key below\n"
                "set grid\n"
                "set xlabel '%s'\n"
                "set ylabel '%s'\n"
                "set title '%s' font ',9'\n"
                "series = system(\"tail -n +2 '%s' | cut -d, -f1 | sort -u | tr ' ' '_' | tr '\\\\n' ' '\")\n"
                "do for [fmt in 'pngcairo svg'] {\n"
                "  set terminal fmt size 900,700 noenhanced\n"
                "  set output sprintf('%s/gpu-sharing-%s.%%s', fmt eq 'svg' ? 'svg' : 'png')\n"
                "  plot for [se in series] sprintf(\"< tr ' ' '_' < '%s' | grep '^%%s,' | sort -t, -k%d -g\", se) "
                "using %d:%d with linespoints title se\n"
                "}\n",
                metrics[m], by_jobs ? "the number of jobs" : "oversubscription", by_jobs ? " and limit" : "",
                by_jobs ? "jobs sharing the GPU" : "oversubscription: footprint / GPU memory limit (0: no limit)",
                labels[m], dahlsim_scenario_comment(s), csv, plots, metrics[m], csv, by_jobs ? 9 : 4, by_jobs ? 9 : 4,
                mcol[m]);
        fclose(f);
        failures += dahlsim_sweep_gnuplot(script);
    }
    return failures ? 1 : 0;
}
