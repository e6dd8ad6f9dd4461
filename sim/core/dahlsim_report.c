/* The sweep report (dahlsim_report.h): the page is written from DIR/results.jsonl, DIR/plots/NAME.svg,
 * DIR/points/NNNN/results.json and DIR/points/NNNN/trace/summary.json; its only outside references are links
 * to files in DIR. */
#include "dahlsim_report.h"

#include "dahlsim_fs.h"
#include "dahlsim_util.h"

#include "dahl_array.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_POINTS 100000

static void html(FILE *f, const char *s)
{
    for (; s != NULL && *s != '\0'; s++) {
        switch (*s) {
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '&':
            fputs("&amp;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        default:
            fputc(*s, f);
        }
    }
}

static double num(const cJSON *o, const char *key, double dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

static const char *str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Human-readable bytes. */
static void bytes_text(double b, char *buf, size_t size)
{
    const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (b >= 1024 && u < 4) {
        b /= 1024;
        u++;
    }
    snprintf(buf, size, u == 0 ? "%.0f %s" : "%.1f %s", b, units[u]);
}

struct point {
    long index;
    cJSON *line;    /* the results.jsonl record */
    cJSON *results; /* points/NNNN/results.json, or NULL */
    cJSON *summary; /* points/NNNN/trace/summary.json, or NULL */
    bool gantt_png, gantt_svg;
};

static int point_cmp(const void *a, const void *b)
{
    const struct point *x = a, *y = b;
    return x->index < y->index ? -1 : x->index > y->index;
}

static bool file_exists(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return false;
    fclose(f);
    return true;
}

/* Reads results.jsonl: one point per line, the last line for a point winning. Returns the count, or -1. */
static long load_points(const char *dir, struct point **out)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s/results.jsonl", dir);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        dahlsim_error("report: %s: %s", path, strerror(errno));
        fprintf(stderr, "hint: DIR is the --out directory of dahlsim sweep\n");
        return -1;
    }
    struct point *pts = NULL;
    long n = 0;
    size_t cap = 0;
    char *line = NULL;
    size_t lcap = 0;
    int lineno = 0;
    ssize_t len;
    while ((len = getline(&line, &lcap, f)) > 0) {
        lineno++;
        if (line[len - 1] != '\n')
            break; /* a partial last line: an interrupted sweep; sweep itself drops it on resume */
        cJSON *o = cJSON_Parse(line);
        const cJSON *idx = cJSON_GetObjectItemCaseSensitive(o, "point");
        if (o == NULL || !cJSON_IsNumber(idx) || idx->valuedouble < 0 || idx->valuedouble >= MAX_POINTS) {
            dahlsim_error("report: %s: line %d: expected a sweep record {\"point\": N, ...}", path, lineno);
            cJSON_Delete(o);
            free(line);
            fclose(f);
            for (long i = 0; i < n; i++)
                cJSON_Delete(pts[i].line);
            free(pts);
            return -1;
        }
        long index = (long)idx->valuedouble, i = 0;
        while (i < n && pts[i].index != index)
            i++;
        if (i < n) {
            cJSON_Delete(pts[i].line);
        } else {
            struct point *grown = dahl_array_grow(pts, &cap, n + 1, sizeof(*pts));
            if (grown == NULL) {
                dahlsim_error("report: out of memory");
                cJSON_Delete(o);
                break;
            }
            pts = grown;
            pts[n++] = (struct point){.index = index};
        }
        pts[i].line = o;
    }
    free(line);
    fclose(f);
    qsort(pts, (size_t)n, sizeof(*pts), point_cmp);
    for (long i = 0; i < n; i++) {
        char p[PATH_MAX + 64];
        snprintf(p, sizeof(p), "%s/points/%04ld/results.json", dir, pts[i].index);
        pts[i].results = dahlsim_read_json(p);
        snprintf(p, sizeof(p), "%s/points/%04ld/trace/summary.json", dir, pts[i].index);
        pts[i].summary = dahlsim_read_json(p);
        snprintf(p, sizeof(p), "%s/points/%04ld/trace/gantt.png", dir, pts[i].index);
        pts[i].gantt_png = file_exists(p);
        snprintf(p, sizeof(p), "%s/points/%04ld/trace/gantt.svg", dir, pts[i].index);
        pts[i].gantt_svg = file_exists(p);
    }
    *out = pts;
    return n;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Copies every DIR/plots/NAME.svg inline (without its XML prolog), sorted by name. */
static void inline_plots(FILE *f, const char *dir)
{
    char plots[PATH_MAX + 16];
    snprintf(plots, sizeof(plots), "%s/plots", dir);
    DIR *d = opendir(plots);
    if (d == NULL) {
        fputs("<p class=\"note\">No plots: the sweep wrote no plots/ directory (gnuplot missing?).</p>\n", f);
        return;
    }
    char *names[256];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < 256) {
        size_t len = strlen(e->d_name);
        if (len > 4 && strcmp(e->d_name + len - 4, ".svg") == 0)
            names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof(*names), name_cmp);
    if (n == 0)
        fputs("<p class=\"note\">No plots: the swept keys are not numeric.</p>\n", f);
    for (size_t i = 0; i < n; i++) {
        if (names[i] == NULL)
            continue;
        char path[2 * PATH_MAX];
        snprintf(path, sizeof(path), "%s/%s", plots, names[i]);
        char *svg = dahlsim_read_text(path, 64u << 20);
        if (svg != NULL) {
            const char *start = strstr(svg, "<svg");
            fputs("<figure class=\"plot\">", f);
            fputs(start != NULL ? start : svg, f);
            fputs("<figcaption>", f);
            html(f, names[i]);
            fputs("</figcaption></figure>\n", f);
            free(svg);
        }
        free(names[i]);
    }
}

static void point_row(FILE *f, const struct point *p)
{
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(p->line, "params");
    fprintf(f, "<tr><td>%ld</td><td>", p->index);
    html(f, str(p->line, "label"));
    fputs("</td><td>", f);
    html(f, str(params, "dataset"));
    fprintf(f, "</td><td>%.0f</td><td>%.0f</td><td>", num(params, "cpus", 0), num(params, "gpus", 0));
    html(f, str(params, "scheduler"));
    fprintf(f, "</td><td>%.0f</td><td>%.6f</td>", num(params, "batch", 0), num(p->line, "makespan_s", 0));
    /* the interval the calibration's measured spread of its machine implies (dahlsim_interval.h) */
    if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(p->line, "makespan_lo_s")))
        fprintf(f, "<td>%.6f&ndash;%.6f</td>", num(p->line, "makespan_lo_s", 0), num(p->line, "makespan_hi_s", 0));
    else
        fputs("<td>unknown</td>", f);
    fprintf(f, "<td>%.1f</td>", num(p->line, "samples_per_s", 0));
    /* the node's joules, simulated on a machine with power figures (docs/energy.md) */
    if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(p->line, "energy_j")))
        fprintf(f, "<td>%.4g</td>", num(p->line, "energy_j", 0));
    else
        fputs("<td>-</td>", f);
    if (p->summary != NULL)
        fprintf(f, "<td>%.1f %%</td>", 100 * num(p->summary, "parallel_efficiency", 0));
    else
        fputs("<td>-</td>", f);
    double moved = 0;
    const cJSON *l;
    cJSON_ArrayForEach(l, cJSON_GetObjectItemCaseSensitive(p->results, "links")) moved += num(l, "bytes", 0);
    char text[64];
    bytes_text(moved, text, sizeof(text));
    fprintf(f, "<td>%s</td><td>", p->results != NULL ? text : "-");
    const cJSON *m;
    bool first = true;
    cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(p->results, "memory_nodes"))
    {
        bytes_text(num(m, "peak_bytes", 0), text, sizeof(text));
        fprintf(f, "%s", first ? "" : "<br>");
        html(f, str(m, "name"));
        fprintf(f, ": %s", text);
        first = false;
    }
    fputs("</td><td>", f);
    if (p->gantt_svg || p->gantt_png) {
        if (p->gantt_svg)
            fprintf(f, "<a href=\"points/%04ld/trace/gantt.svg\">SVG</a> ", p->index);
        if (p->gantt_png)
            fprintf(f, "<a href=\"points/%04ld/trace/gantt.png\">PNG</a> ", p->index);
        fprintf(f, "<a href=\"points/%04ld/trace/summary.txt\">summary</a>", p->index);
    } else {
        fputs("not traced", f);
    }
    fputs("</td></tr>\n", f);
}

static void point_details(FILE *f, const struct point *p)
{
    if (p->summary == NULL)
        return;
    fprintf(f, "<details><summary>point %ld: ", p->index);
    html(f, str(p->line, "label"));
    fprintf(f, " &mdash; parallel efficiency %.1f %%, %.0f tasks in %.3f ms</summary>\n",
            100 * num(p->summary, "parallel_efficiency", 0), num(p->summary, "tasks", 0),
            1e3 * num(p->summary, "span_s", 0));
    fputs("<table><tr><th>worker</th><th>tasks</th><th>busy ms</th><th>idle ms</th><th>transfer wait ms</th>"
          "<th>scheduler ms</th><th>utilisation</th></tr>\n",
          f);
    const cJSON *w;
    cJSON_ArrayForEach(w, cJSON_GetObjectItemCaseSensitive(p->summary, "workers"))
    {
        double util = num(w, "utilisation", 0);
        fputs("<tr><td>", f);
        html(f, str(w, "name"));
        fprintf(f, "</td><td>%.0f</td><td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%.3f</td>"
                   "<td><span class=\"bar\" style=\"width:%.0fpx\"></span> %.1f %%</td></tr>\n",
                num(w, "tasks", 0), 1e3 * num(w, "busy_s", 0), 1e3 * num(w, "idle_s", 0),
                1e3 * num(w, "transfer_wait_s", 0), 1e3 * num(w, "scheduler_s", 0), 100 * util, 100 * util);
    }
    fputs("</table>\n<table><tr><th>layer</th><th>pass</th><th>tasks</th><th>busy ms</th>"
          "<th>first-to-last per step, ms</th></tr>\n",
          f);
    const cJSON *g;
    cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(p->summary, "layers"))
    {
        fputs("<tr><td>", f);
        html(f, str(g, "layer"));
        fputs("</td><td>", f);
        html(f, str(g, "pass"));
        fprintf(f, "</td><td>%.0f</td><td>%.3f</td><td>%.4f</td></tr>\n", num(g, "tasks", 0), 1e3 * num(g, "busy_s", 0),
                1e3 * num(g, "first_to_last_mean_s", 0));
    }
    fputs("</table></details>\n", f);
}

static const char style[] =
    "body{font-family:sans-serif;margin:2em;max-width:1500px;color:#222}"
    "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}"
    "td:nth-child(2),td:nth-child(3),th{text-align:left}th{background:#f0f0f0}"
    ".plot{display:inline-block;margin:0 1em 1em 0}.plot svg{max-width:900px;height:auto}"
    ".bar{display:inline-block;height:10px;background:#1f77b4}.note{color:#666}details{margin:0.5em 0}";

static void free_points(struct point *pts, long n)
{
    for (long i = 0; i < n; i++) {
        cJSON_Delete(pts[i].line);
        cJSON_Delete(pts[i].results);
        cJSON_Delete(pts[i].summary);
    }
    free(pts);
}

/* The page of the n points of sweep directory dir. */
static void write_page(FILE *f, const char *dir, const struct point *pts, long n)
{
    /* The scenario's question, from the file the first point's results.json names. */
    const char *scenario = n > 0 ? str(pts[0].results, "scenario") : NULL;
    cJSON *sc = scenario != NULL ? dahlsim_read_json(scenario) : NULL;
    fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>dahlsim sweep report: ");
    html(f, dir);
    fprintf(f, "</title><style>%s</style></head><body>\n<h1>dahlsim sweep report</h1>\n<p>Sweep directory <code>", style);
    html(f, dir);
    fputs("</code>", f);
    if (scenario != NULL) {
        fputs(", scenario <code>", f);
        html(f, scenario);
        fputs("</code>", f);
    }
    fprintf(f, ": %ld finished point%s.</p>\n", n, n == 1 ? "" : "s");
    if (str(sc, "comment") != NULL) {
        fputs("<p class=\"question\"><strong>Question:</strong> ", f);
        html(f, str(sc, "comment"));
        fputs("</p>\n", f);
    }
    cJSON_Delete(sc);
    if (n > 0 && pts[0].results != NULL) {
        fputs("<p class=\"note\">", f);
        html(f, str(pts[0].results, "mode"));
        fputs(" runs; StarPU ", f);
        html(f, str(cJSON_GetObjectItemCaseSensitive(pts[0].results, "versions"), "starpu"));
        fputs(".</p>\n", f);
    }
    fputs("<h2>Plots</h2>\n", f);
    inline_plots(f, dir);
    fputs("<h2>Points</h2>\n<table><tr><th>#</th><th>point</th><th>dataset</th><th>CPUs</th><th>GPUs</th>"
          "<th>scheduler</th><th>batch</th><th>makespan s</th><th>interval s</th><th>samples/s</th><th>energy J</th>"
          "<th>parallel efficiency</th><th>bytes moved</th><th>peak memory</th><th>Gantt chart</th></tr>\n",
          f);
    for (long i = 0; i < n; i++)
        point_row(f, &pts[i]);
    fputs("</table>\n<p class=\"note\">Parallel efficiency: busy time of all workers over (workers &times; traced "
          "span), from the trace summary of traced points. Bytes moved: all bus links; peak memory: per memory "
          "node, StarPU's allocations plus dahl's registered tensors.</p>\n",
          f);
    fputs("<h2>Traced points</h2>\n", f);
    bool any = false;
    for (long i = 0; i < n; i++) {
        point_details(f, &pts[i]);
        any = any || pts[i].summary != NULL;
    }
    if (!any)
        fputs("<p class=\"note\">No point was traced (scenario key \"trace\": true).</p>\n", f);
    fputs("</body></html>\n", f);
}

int dahlsim_report_write(const char *dir, const char *path)
{
    struct point *pts = NULL;
    long n = load_points(dir, &pts);
    if (n < 0)
        return -EINVAL;
    char tmp[PATH_MAX + 40];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (f == NULL) {
        dahlsim_error("report: --out: %s: %s", tmp, strerror(errno));
        free_points(pts, n);
        return -EINVAL;
    }
    write_page(f, dir, pts, n);
    free_points(pts, n);
    bool bad = ferror(f) != 0;
    if (fclose(f) != 0 || bad || rename(tmp, path) != 0) {
        dahlsim_error("report: %s: %s", path, strerror(errno));
        unlink(tmp);
        return -EIO;
    }
    return 0;
}
