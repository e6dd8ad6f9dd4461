/* A sweep's results.csv and plots (dahlsim_sweep.h), rebuilt from results.jsonl after every run of the sweep:
 * the CSV's columns are the points' parameters, then their figures; the plots read the CSV. */
#include "dahlsim_sweep.h"

#include "dahlsim_fs.h"
#include "dahlsim_scaling.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int dahlsim_sweep_write_csv(const char *dir, const struct dahlsim_scenario *s)
{
    char jsonl[PATH_MAX + 32], csv[PATH_MAX + 32], tmp[PATH_MAX + 64];
    snprintf(jsonl, sizeof(jsonl), "%s/results.jsonl", dir);
    snprintf(csv, sizeof(csv), "%s/results.csv", dir);
    /* per process: the --only tasks of a Slurm array may write it at once (the last rename wins, whole) */
    snprintf(tmp, sizeof(tmp), "%s/.results.csv.tmp-%ld", dir, (long)getpid());
    size_t n = dahlsim_scenario_points(s);
    char **lines = calloc(n, sizeof(*lines));
    FILE *in = fopen(jsonl, "r");
    if (lines == NULL || in == NULL) {
        free(lines);
        if (in != NULL)
            fclose(in);
        return in == NULL ? 0 : -ENOMEM;
    }
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, in) > 0) {
        cJSON *o = cJSON_Parse(line);
        const cJSON *idx = cJSON_GetObjectItemCaseSensitive(o, "point");
        if (cJSON_IsNumber(idx) && idx->valuedouble >= 0 && idx->valuedouble < (double)n) {
            const cJSON *p = cJSON_GetObjectItemCaseSensitive(o, "params");
            char buf[2048];
            size_t used = (size_t)snprintf(buf, sizeof(buf), "%zu", (size_t)idx->valuedouble);
            const char *cols[] = {"machine", "dataset", "model", "scheduler", "batch", "samples", "epochs",
                                  "cpus", "gpus", "gpu_memory_mib", "prefetch", "perfmodel", "reduction", "seed"};
            for (size_t k = 0; k < sizeof(cols) / sizeof(cols[0]) && used < sizeof(buf); k++) {
                const cJSON *v = cJSON_GetObjectItemCaseSensitive(p, cols[k]);
                if (cJSON_IsString(v))
                    used += (size_t)snprintf(buf + used, sizeof(buf) - used, ",%s", v->valuestring);
                else if (cJSON_IsBool(v))
                    used += (size_t)snprintf(buf + used, sizeof(buf) - used, ",%s", cJSON_IsTrue(v) ? "true" : "false");
                else
                    used += (size_t)snprintf(buf + used, sizeof(buf) - used, ",%.17g", v ? v->valuedouble : NAN);
            }
            const char *vals[] = {"makespan_s", "samples_per_s", "iterations", "params.nodes", "wall_s",
                                  "allreduce_s_mean"};
            for (size_t k = 0; k < 6 && used < sizeof(buf); k++) {
                const cJSON *v = strncmp(vals[k], "params.", 7) == 0
                                     ? cJSON_GetObjectItemCaseSensitive(p, vals[k] + 7)
                                     : cJSON_GetObjectItemCaseSensitive(o, vals[k]);
                used += (size_t)snprintf(buf + used, sizeof(buf) - used, ",%.17g", v ? v->valuedouble : NAN);
            }
            /* last, so that the plots' column numbers stay those of older sweeps */
            const cJSON *costs = cJSON_GetObjectItemCaseSensitive(p, "runtime_costs");
            if (used < sizeof(buf))
                used += (size_t)snprintf(buf + used, sizeof(buf) - used, ",%s",
                                         cJSON_IsString(costs) ? costs->valuestring : "measured");
            /* several jobs ("workloads"): the order and the host<->GPU traffic; empty and nan otherwise */
            const cJSON *order = cJSON_GetObjectItemCaseSensitive(p, "job_order");
            if (used < sizeof(buf))
                used += (size_t)snprintf(buf + used, sizeof(buf) - used, ",%s",
                                         cJSON_IsString(order) ? order->valuestring : "");
            const char *io[] = {"h2d_bytes", "d2h_bytes", "evictions", "gpu_wait_s", "gpu_busy_fraction",
                                "gpu_peak_bytes"};
            for (size_t k = 0; k < 6 && used < sizeof(buf); k++) {
                const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, io[k]);
                used += (size_t)snprintf(buf + used, sizeof(buf) - used, ",%.17g", v ? v->valuedouble : NAN);
            }
            const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(p, "jobs");
            const cJSON *contexts = cJSON_GetObjectItemCaseSensitive(p, "job_contexts");
            if (used < sizeof(buf))
                used += (size_t)snprintf(buf + used, sizeof(buf) - used, ",%.17g,%s",
                                         cJSON_IsNumber(jobs) ? jobs->valuedouble : NAN,
                                         cJSON_IsString(contexts) ? contexts->valuestring : "");
            /* samples per layer task, as the run resolved it (the batch for "batch") */
            const cJSON *grain = cJSON_GetObjectItemCaseSensitive(o, "grain");
            if (used < sizeof(buf))
                used += (size_t)snprintf(buf + used, sizeof(buf) - used, ",%.17g",
                                         cJSON_IsNumber(grain) ? grain->valuedouble : NAN);
            const cJSON *depth = cJSON_GetObjectItemCaseSensitive(p, "pipeline_depth");
            const cJSON *schedule = cJSON_GetObjectItemCaseSensitive(p, "pipeline_schedule");
            if (used < sizeof(buf))
                used += (size_t)snprintf(buf + used, sizeof(buf) - used, ",%.17g,%s",
                                         cJSON_IsNumber(depth) ? depth->valuedouble : 1.0,
                                         cJSON_IsString(schedule) ? schedule->valuestring : "fill");
            /* nan without power figures; the interval's ends nan where the calibration's spread is unknown */
            const char *joules[] = {"energy_j", "energy_per_sample_j", "makespan_lo_s", "makespan_hi_s"};
            for (size_t k = 0; k < 4 && used < sizeof(buf); k++) {
                const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, joules[k]);
                used += (size_t)snprintf(buf + used, sizeof(buf) - used, ",%.17g", v ? v->valuedouble : NAN);
            }
            free(lines[(size_t)idx->valuedouble]);
            lines[(size_t)idx->valuedouble] = strdup(buf);
        }
        cJSON_Delete(o);
    }
    free(line);
    fclose(in);
    FILE *out = fopen(tmp, "w");
    int ret = out == NULL ? -errno : 0;
    if (out != NULL) {
        fputs("point,machine,dataset,model,scheduler,batch,samples,epochs,cpus,gpus,gpu_memory_mib,prefetch,"
              "perfmodel,reduction,seed,makespan_s,samples_per_s,iterations,nodes,wall_s,allreduce_s_mean,runtime_costs,"
              "job_order,h2d_bytes,d2h_bytes,evictions,gpu_wait_s,gpu_busy_fraction,gpu_peak_bytes,jobs,"
              "job_contexts,grain,pipeline_depth,pipeline_schedule,energy_j,energy_per_sample_j,makespan_lo_s,makespan_hi_s\n",
              out);
        for (size_t i = 0; i < n; i++)
            if (lines[i] != NULL)
                fprintf(out, "%s\n", lines[i]);
        if (fflush(out) != 0 || fsync(fileno(out)) != 0)
            ret = -errno;
        if (fclose(out) != 0 && ret == 0)
            ret = -errno;
        if (ret == 0 && rename(tmp, csv) != 0)
            ret = -errno;
        if (ret != 0)
            unlink(tmp);
    }
    for (size_t i = 0; i < n; i++)
        free(lines[i]);
    free(lines);
    return ret;
}

/* CSV column (1-based) of a scenario key, or 0 when it is not a numeric column. */
static int numeric_column(const char *key)
{
    const char *cols[] = {"batch", "samples", "epochs", "cpus", "gpus", "gpu_memory_mib", "seed"};
    const int idx[] = {6, 7, 8, 9, 10, 11, 15};
    for (size_t k = 0; k < sizeof(cols) / sizeof(cols[0]); k++)
        if (strcmp(cols[k], key) == 0)
            return idx[k];
    if (strcmp(key, "iterations") == 0)
        return 7; /* iterations are shown as samples */
    if (strcmp(key, "nodes") == 0)
        return 19;
    if (strcmp(key, "job_count") == 0)
        return 30; /* the jobs that ran */
    return 0;
}

int dahlsim_sweep_gnuplot(const char *script)
{
    char cmd[2 * PATH_MAX];
    snprintf(cmd, sizeof(cmd), "gnuplot '%s' 2>/dev/null", script);
    return system(cmd) != 0;
}

/* results.csv's columns of the makespan and of the node's joules (1-based, as in the header above). */
enum { CSV_MAKESPAN = 16, CSV_ENERGY = 35 };

/* Whether a row of dir/results.csv has a number in the energy column. */
static bool csv_has_energy(const char *dir)
{
    char path[PATH_MAX + 16];
    snprintf(path, sizeof(path), "%s/results.csv", dir);
    char *text = dahlsim_read_text(path, SIZE_MAX);
    bool found = false;
    for (char *save = NULL, *row = text != NULL ? strtok_r(text, "\n", &save) : NULL; row != NULL && !found;
         row = strtok_r(NULL, "\n", &save)) {
        const char *field = row;
        for (int c = 1; c < CSV_ENERGY && field != NULL; c++)
            field = (field = strchr(field, ',')) != NULL ? field + 1 : NULL;
        found = field != NULL && (field[0] == '.' || (field[0] >= '0' && field[0] <= '9'));
    }
    free(text);
    return found;
}

/* One gnuplot script per numeric swept key and metric, run for PNG and SVG. */
int dahlsim_sweep_write_plots(const char *dir, const struct dahlsim_scenario *s)
{
    size_t nkeys;
    const char *const *keys = dahlsim_scenario_sweep_keys(s, &nkeys);
    char plots[PATH_MAX + 16];
    snprintf(plots, sizeof(plots), "%s/plots", dir);
    if (dahlsim_make_dirs(plots) != 0)
        return 1;
    int failures = 0;
    for (size_t k = 0; k < nkeys; k++) {
        int col = numeric_column(keys[k]);
        if (col == 0)
            continue;
        const char *metrics[] = {"makespan_s", "samples_per_s"};
        const int mcol[] = {16, 17};
        for (int m = 0; m < 2; m++) {
            char script[PATH_MAX + 64];
            snprintf(script, sizeof(script), "%s/%s-vs-%s.gp", plots, metrics[m], keys[k]);
            FILE *f = fopen(script, "w");
            if (f == NULL)
                return 1;
            /* One line per scheduler: gnuplot filters rows by the scheduler column (5). */
            fprintf(f,
                    "# %s against %s, one line per scheduler (from ../results.csv)\n"
                    "set datafile separator ','\n"
                    "set key outside right\n"
                    "set grid\n"
                    "set xlabel '%s'\n"
                    "set ylabel '%s'\n"
                    "set title '%s'\n"
                    "scheds = system(\"tail -n +2 '%s/results.csv' | cut -d, -f5 | sort -u | tr '\\\\n' ' '\")\n"
                    "do for [fmt in 'pngcairo svg'] {\n"
                    "  set terminal fmt size 900,540 noenhanced\n"
                    "  set output sprintf('%s/%s-vs-%s.%%s', fmt eq 'svg' ? 'svg' : 'png')\n"
                    "  plot for [sch in scheds] sprintf(\"< grep ',%%s,' '%s/results.csv' | sort -t, -k%d -g\", sch) "
                    "using %d:%d with linespoints title sch\n"
                    "}\n",
                    metrics[m], keys[k], keys[k], metrics[m], dahlsim_scenario_comment(s), dir, plots, metrics[m],
                    keys[k], dir, col, col, mcol[m]);
            fclose(f);
            failures += dahlsim_sweep_gnuplot(script);
        }
    }
    /* Simulated with power figures: the node's joules against the makespan, every point, per scheduler. */
    if (csv_has_energy(dir)) {
        char script[PATH_MAX + 64];
        snprintf(script, sizeof(script), "%s/energy-vs-makespan.gp", plots);
        FILE *f = fopen(script, "w");
        if (f == NULL)
            return 1;
        fprintf(f,
                "# the node's energy against the makespan, one point per sweep point (from ../results.csv)\n"
                "set datafile separator ','\n"
                "set key outside right\n"
                "set grid\n"
                "set logscale xy\n"
                "set xlabel 'makespan (s)'\n"
                "set ylabel 'energy of the node (J, %s)'\n"
                "set title '%s'\n"
                "scheds = system(\"tail -n +2 '%s/results.csv' | cut -d, -f5 | sort -u | tr '\\\\n' ' '\")\n"
                "do for [fmt in 'pngcairo svg'] {\n"
                "  set terminal fmt size 900,540 noenhanced\n"
                "  set output sprintf('%s/energy-vs-makespan.%%s', fmt eq 'svg' ? 'svg' : 'png')\n"
                "  plot for [sch in scheds] sprintf(\"< grep ',%%s,' '%s/results.csv'\", sch) "
                "using %d:%d with points title sch\n"
                "}\n",
                "SimGrid host energy plugin", dahlsim_scenario_comment(s), dir, plots, dir, CSV_MAKESPAN,
                CSV_ENERGY);
        fclose(f);
        failures += dahlsim_sweep_gnuplot(script);
    }
    /* Several jobs swept over the GPU memory limit: cost against oversubscription, per job order. */
    if (dahlsim_sweep_write_sharing(dir, s) != 0)
        failures++;
    /* A node-count sweep: speedup, efficiency and the simulation's cost against nodes. */
    for (size_t k = 0; k < nkeys; k++)
        if (strcmp(keys[k], "nodes") == 0 && dahlsim_scaling_write(dir, s) != 0)
            failures++;
    return failures ? 1 : 0;
}
