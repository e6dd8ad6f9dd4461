/* Scaling figures of node-count sweeps: see dahlsim_scaling.h. */
#include "dahlsim_scaling.h"

#include "dahlsim_fs.h"
#include "dahlsim_sweep.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct point {
    char series[512];
    double nodes, samples_per_s, makespan_s, wall_s, allreduce_s;
};

/* The point's label without its "nodes=N" word: the series it belongs to. */
static void series_of(const char *label, char *out, size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    const char *p = label;
    while (*p != '\0') {
        const char *end = strchr(p, ' ');
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        if (strncmp(p, "nodes=", 6) != 0 && used < size)
            used += (size_t)snprintf(out + used, size - used, "%s%.*s", used ? " " : "", (int)len, p);
        p += len;
        while (*p == ' ')
            p++;
    }
    if (out[0] == '\0')
        snprintf(out, size, "all");
}

static int by_series_then_nodes(const void *a, const void *b)
{
    const struct point *x = a, *y = b;
    int c = strcmp(x->series, y->series);
    return c != 0 ? c : (x->nodes > y->nodes) - (x->nodes < y->nodes);
}

static double number(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

int dahlsim_scaling_write(const char *dir, const struct dahlsim_scenario *s)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof(path), "%s/results.jsonl", dir);
    FILE *in = fopen(path, "r");
    if (in == NULL)
        return 1;
    size_t n = 0, cap = dahlsim_scenario_points(s);
    struct point *pts = calloc(cap > 0 ? cap : 1, sizeof(*pts));
    char *line = NULL;
    size_t len = 0;
    while (pts != NULL && getline(&line, &len, in) > 0 && n < cap) {
        cJSON *o = cJSON_Parse(line);
        const cJSON *label = cJSON_GetObjectItemCaseSensitive(o, "label");
        const cJSON *params = cJSON_GetObjectItemCaseSensitive(o, "params");
        struct point *p = &pts[n];
        p->nodes = number(params, "nodes");
        p->samples_per_s = number(o, "samples_per_s");
        p->makespan_s = number(o, "makespan_s");
        p->wall_s = number(o, "wall_s");
        p->allreduce_s = number(o, "allreduce_s_mean");
        if (cJSON_IsString(label) && p->nodes > 0 && p->samples_per_s > 0) {
            series_of(label->valuestring, p->series, sizeof(p->series));
            n++;
        }
        cJSON_Delete(o);
    }
    free(line);
    fclose(in);
    if (pts == NULL)
        return 1;
    qsort(pts, n, sizeof(*pts), by_series_then_nodes);
    char plots[PATH_MAX + 16], csv[PATH_MAX + 32], dat[PATH_MAX + 32];
    snprintf(plots, sizeof(plots), "%s/plots", dir);
    snprintf(csv, sizeof(csv), "%s/scaling.csv", plots);
    snprintf(dat, sizeof(dat), "%s/scaling.dat", plots);
    FILE *c = dahlsim_make_dirs(plots) == 0 ? fopen(csv, "w") : NULL;
    FILE *d = c != NULL ? fopen(dat, "w") : NULL;
    if (d == NULL) {
        if (c != NULL)
            fclose(c);
        free(pts);
        return 1;
    }
    fputs("series,nodes,samples_per_s,makespan_s,speedup,efficiency,sim_wall_s,allreduce_s_mean\n", c);
    /* scaling.dat: one gnuplot block (index) per series, blocks separated by two blank lines. */
    size_t nseries = 0;
    char names[64][512];
    for (size_t i = 0; i < n; i++) {
        bool first = i == 0 || strcmp(pts[i].series, pts[i - 1].series) != 0;
        static const struct point *base;
        if (first) {
            base = &pts[i];
            if (nseries > 0)
                fputs("\n\n", d);
            if (nseries < 64)
                snprintf(names[nseries], sizeof(names[0]), "%s", pts[i].series);
            nseries++;
        }
        double speedup = pts[i].samples_per_s / base->samples_per_s;
        double efficiency = speedup * base->nodes / pts[i].nodes;
        fprintf(c, "\"%s\",%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n", pts[i].series, pts[i].nodes,
                pts[i].samples_per_s, pts[i].makespan_s, speedup, efficiency, pts[i].wall_s, pts[i].allreduce_s);
        fprintf(d, "%.17g %.17g %.17g %.17g %.17g\n", pts[i].nodes, speedup, efficiency, pts[i].wall_s,
                base->nodes);
    }
    fclose(c);
    fclose(d);
    free(pts);
    if (nseries > 64)
        nseries = 64;
    const char *figs[] = {"speedup", "efficiency", "sim-wall"};
    const char *ylabels[] = {"speedup (samples/s relative to the fewest nodes)", "parallel efficiency",
                             "simulation wall time (s)"};
    const int cols[] = {2, 3, 4};
    int failures = 0;
    for (int f = 0; f < 3; f++) {
        char script[PATH_MAX + 64];
        snprintf(script, sizeof(script), "%s/%s-vs-nodes.gp", plots, figs[f]);
        FILE *g = fopen(script, "w");
        if (g == NULL)
            return 1;
        fprintf(g,
                "# %s against nodes, one line per series (from scaling.dat; dahlsim_scaling.h has the definitions)\n"
                "set key outside right\nset grid\nset logscale x 2\nset xlabel 'nodes'\nset ylabel '%s'\n"
                "set title '%s'\n%s"
                "do for [fmt in 'pngcairo svg'] {\n"
                "  set terminal fmt size 900,540 noenhanced\n"
                "  set output sprintf('%s/%s-vs-nodes.%%s', fmt eq 'svg' ? 'svg' : 'png')\n"
                "  plot ",
                figs[f], ylabels[f], dahlsim_scenario_comment(s), f == 2 ? "set logscale y 2\n" : "", plots, figs[f]);
        for (size_t i = 0; i < nseries; i++)
            fprintf(g, "%s'%s' index %zu using 1:%d with linespoints title \"%s\"", i ? ", " : "", dat, i, cols[f],
                    names[i]);
        if (f == 0)
            fprintf(g, ", '%s' index 0 using 1:($1/$5) with lines dashtype 2 title 'ideal'", dat);
        if (f == 1)
            fprintf(g, ", 1 with lines dashtype 2 title 'ideal'");
        fprintf(g, "\n}\n");
        fclose(g);
        failures += dahlsim_sweep_gnuplot(script);
    }
    return failures ? 1 : 0;
}
