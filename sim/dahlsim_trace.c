/* Traces and the utilisation summary of one run, from dahl's task records: see dahlsim_trace.h. Times in the
 * files are on StarPU's clock (simulated time in simulated runs): Paje in milliseconds, Chrome in microseconds,
 * the Gantt chart in milliseconds. Everything is sorted before it is written, so the same records give the
 * same bytes. */
#include "dahlsim_trace.h"

#include "dahlsim_util.h"
#include "dahlsim_spawn.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_CODELETS 64
#define GANTT_MAX_BOXES_PER_ROW 4000 /* closer tasks of one codelet merge: an image has ~2000 columns */

/* Colours per codelet, in the order codelets are first met after sorting names (stable across runs). */
static const char *const palette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
                                      "#e377c2", "#17becf", "#bcbd22", "#393b79", "#637939", "#8c6d31",
                                      "#843c39", "#7b4173", "#3182bd", "#e6550d"};
#define NPALETTE (sizeof(palette) / sizeof(palette[0]))
#define IDLE_COLOUR "#e8e8e8"

bool dahlsim_trace_window_parse(const char *what, const char *text, long *first, long *last)
{
    char *end;
    errno = 0;
    long a = strtol(text, &end, 10);
    bool ok = errno == 0 && end != text && *end == ':' && a >= 1;
    long b = 0;
    if (ok) {
        const char *p = end + 1;
        b = strtol(p, &end, 10);
        ok = errno == 0 && end != p && *end == '\0' && b >= a;
    }
    if (!ok) {
        dahlsim_error("%s: expected START:END, training steps counted from 1 with START <= END (e.g. 3:5), "
                      "got \"%s\"",
                      what, text);
        return false;
    }
    *first = a - 1;
    *last = b - 1;
    return true;
}

/* ---- sorting and indexing ---------------------------------------------------------------------------------- */

static int task_cmp(const void *pa, const void *pb)
{
    const struct dahl_profile_task *a = pa, *b = pb;
    if (a->start_us != b->start_us)
        return a->start_us < b->start_us ? -1 : 1;
    if (a->worker != b->worker)
        return a->worker < b->worker ? -1 : 1;
    return a->job < b->job ? -1 : a->job > b->job;
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The distinct codelet names of the run, sorted. Returns the count. */
static size_t codelet_list(const struct dahlsim_trace_run *run, const char **names)
{
    size_t n = 0;
    for (size_t t = 0; t < run->ntasks; t++) {
        size_t k = 0;
        while (k < n && strcmp(names[k], run->tasks[t].codelet) != 0)
            k++;
        if (k == n && n < MAX_CODELETS)
            names[n++] = run->tasks[t].codelet;
    }
    qsort(names, n, sizeof(*names), str_cmp);
    return n;
}

static size_t codelet_index(const char *const *names, size_t n, const char *name)
{
    for (size_t k = 0; k < n; k++)
        if (names[k] == name || strcmp(names[k], name) == 0)
            return k;
    return n;
}

/* The pass a codelet belongs to, from its perf-model symbol. */
static const char *pass_of(const char *codelet)
{
    if (strstr(codelet, "_forward") != NULL)
        return "forward";
    if (strstr(codelet, "_backward") != NULL)
        return "backward";
    if (strstr(codelet, "softmax") != NULL)
        return "loss";
    return "update";
}

static const char *layer_name(const struct dahlsim_trace_run *run, int layer)
{
    if (layer < 0 || layer > run->nlayers || run->layer_names == NULL)
        return "reduction"; /* StarPU's REDUX reductions between per-worker copies work on unlabelled handles */
    return run->layer_names[layer];
}

/* Writes s as a JSON string body (no quotes) to f. */
static void json_escape(FILE *f, const char *s)
{
    for (; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
}

/* Closes f; returns 0 or -errno with a message naming path. */
static int close_checked(FILE *f, const char *path, char *err, size_t err_size)
{
    bool bad = ferror(f) != 0;
    int e = errno;
    if (fclose(f) != 0 && !bad) {
        bad = true;
        e = errno;
    }
    if (bad) {
        snprintf(err, err_size, "%s: %s", path, strerror(e != 0 ? e : EIO));
        return -(e != 0 ? e : EIO);
    }
    return 0;
}

static FILE *open_in(const char *dir, const char *name, char *path, size_t path_size, char *err, size_t err_size)
{
    snprintf(path, path_size, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (f == NULL)
        snprintf(err, err_size, "%s: %s", path, strerror(errno));
    return f;
}

/* ---- Paje ---------------------------------------------------------------------------------------------------- */

struct paje_event {
    double t_ms;
    int worker;
    int order;         /* within one time and worker: the state set last wins */
    const char *value; /* entity value alias */
};

static int paje_event_cmp(const void *pa, const void *pb)
{
    const struct paje_event *a = pa, *b = pb;
    if (a->t_ms != b->t_ms)
        return a->t_ms < b->t_ms ? -1 : 1;
    if (a->worker != b->worker)
        return a->worker - b->worker;
    return a->order - b->order;
}

static const char paje_header[] =
    "%EventDef PajeDefineContainerType 0\n%  Alias string\n%  Type string\n%  Name string\n%EndEventDef\n"
    "%EventDef PajeDefineStateType 1\n%  Alias string\n%  Type string\n%  Name string\n%EndEventDef\n"
    "%EventDef PajeDefineEntityValue 2\n%  Alias string\n%  Type string\n%  Name string\n%  Color color\n"
    "%EndEventDef\n"
    "%EventDef PajeCreateContainer 3\n%  Time date\n%  Alias string\n%  Type string\n%  Container string\n"
    "%  Name string\n%EndEventDef\n"
    "%EventDef PajeDestroyContainer 4\n%  Time date\n%  Type string\n%  Name string\n%EndEventDef\n"
    "%EventDef PajeSetState 5\n%  Time date\n%  Type string\n%  Container string\n%  Value string\n%EndEventDef\n"
    "%EventDef PajeDefineLinkType 6\n%  Alias string\n%  Type string\n%  StartContainerType string\n"
    "%  EndContainerType string\n%  Name string\n%EndEventDef\n"
    "%EventDef PajeStartLink 7\n%  Time date\n%  Type string\n%  Container string\n%  Value string\n"
    "%  StartContainer string\n%  Key string\n%EndEventDef\n"
    "%EventDef PajeEndLink 8\n%  Time date\n%  Type string\n%  Container string\n%  Value string\n"
    "%  EndContainer string\n%  Key string\n%EndEventDef\n";

/* A transfer's end, for writing link ends in time order (transfers are in start order). */
struct link_end {
    double t_us;
    size_t index;
};

static int link_end_cmp(const void *pa, const void *pb)
{
    const struct link_end *a = pa, *b = pb;
    if (a->t_us != b->t_us)
        return a->t_us < b->t_us ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

/* "#rrggbb" as Paje's "r g b" in [0, 1]. */
static void paje_colour(FILE *f, const char *hex)
{
    unsigned r = 0, g = 0, b = 0;
    sscanf(hex + 1, "%2x%2x%2x", &r, &g, &b);
    fprintf(f, "\"%.3f %.3f %.3f\"", r / 255.0, g / 255.0, b / 255.0);
}

static int write_paje(const struct dahlsim_trace_run *run, const char *const *codelets, size_t ncodelets,
                      double t0_us, double t1_us, const char *dir, char *err, size_t err_size)
{
    char path[PATH_MAX + 32];
    size_t nev = 4 * run->ntasks; /* at most Scheduling, Fetching, the task and Idle each */
    struct paje_event *ev = malloc((nev > 0 ? nev : 1) * sizeof(*ev));
    if (ev == NULL) {
        snprintf(err, err_size, "%s/dahl.paje: out of memory", dir);
        return -ENOMEM;
    }
    /* Per worker, in start order: Scheduling and Fetching input just before the task (StarPU measures their
     * durations), the codelet, then Idle. Clipped so a state never starts before the previous task ended. */
    double *last_end = calloc(run->nworkers + 1, sizeof(double));
    if (last_end == NULL) {
        free(ev);
        snprintf(err, err_size, "%s/dahl.paje: out of memory", dir);
        return -ENOMEM;
    }
    for (size_t w = 0; w <= run->nworkers; w++)
        last_end[w] = t0_us;
    size_t k = 0;
    for (size_t t = 0; t < run->ntasks; t++) {
        const struct dahl_profile_task *x = &run->tasks[t];
        size_t w = x->worker >= 0 && (size_t)x->worker < run->nworkers ? (size_t)x->worker : run->nworkers;
        double fetch_start = fmax(x->start_us - x->fetch_us, last_end[w]);
        double pop_start = fmax(fetch_start - x->pop_us, last_end[w]);
        if (pop_start < fetch_start)
            ev[k++] = (struct paje_event){pop_start / 1e3, x->worker, 0, "Sc"};
        if (fetch_start < x->start_us)
            ev[k++] = (struct paje_event){fetch_start / 1e3, x->worker, 1, "Fe"};
        ev[k++] = (struct paje_event){x->start_us / 1e3, x->worker, 2, x->codelet};
        /* Idle from the end on; a task starting at that very time sorts after it (order -1) and wins. */
        ev[k++] = (struct paje_event){x->end_us / 1e3, x->worker, -1, "Id"};
        if (x->end_us > last_end[w])
            last_end[w] = x->end_us;
    }
    free(last_end);
    qsort(ev, k, sizeof(*ev), paje_event_cmp);

    /* Links: starts in the transfers' (start) order, ends in end order; the file is in time order overall. */
    struct link_end *ends = malloc((run->ntransfers > 0 ? run->ntransfers : 1) * sizeof(*ends));
    if (ends == NULL) {
        free(ev);
        snprintf(err, err_size, "%s/dahl.paje: out of memory", dir);
        return -ENOMEM;
    }
    for (size_t i = 0; i < run->ntransfers; i++)
        ends[i] = (struct link_end){run->transfers[i].end_us, i};
    qsort(ends, run->ntransfers, sizeof(*ends), link_end_cmp);
    /* Containers live from the first task or transfer to the last (prefetches start before the first task). */
    double open_us = t0_us, close_us = t1_us;
    if (run->ntransfers > 0) {
        open_us = fmin(open_us, run->transfers[0].start_us);
        close_us = fmax(close_us, ends[run->ntransfers - 1].t_us);
    }

    FILE *f = open_in(dir, "dahl.paje", path, sizeof(path), err, err_size);
    if (f == NULL) {
        free(ev);
        free(ends);
        return -errno;
    }
    fputs(paje_header, f);
    /* Merged multi-node runs: Machine > Node > Worker. */
    fputs(run->worker_host != NULL ? "0 M 0 \"Machine\"\n0 H M \"Node\"\n0 W H \"Worker\"\n"
                                   : "0 M 0 \"Machine\"\n0 W M \"Worker\"\n",
          f);
    fputs("1 S W \"Worker State\"\n0 N M \"Memory node\"\n6 L M N N \"Data transfer\"\n", f);
    fputs("2 Id S \"Idle\" ", f);
    paje_colour(f, IDLE_COLOUR);
    fputs("\n2 Fe S \"Fetching input\" \"0.900 0.100 0.100\"\n2 Sc S \"Scheduling\" \"0.600 0.600 0.000\"\n", f);
    for (size_t c = 0; c < ncodelets; c++) {
        fprintf(f, "2 %s S \"%s\" ", codelets[c], codelets[c]);
        paje_colour(f, palette[c % NPALETTE]);
        fputc('\n', f);
    }
    double open_ms = open_us / 1e3, t0_ms = t0_us / 1e3;
    fprintf(f, "3 %.9f m M 0 \"dahl\"\n", open_ms);
    for (int h = 0; run->worker_host != NULL && h < run->nhosts; h++)
        fprintf(f, "3 %.9f h%d H m \"node %d\"\n", open_ms, h, h);
    for (size_t w = 0; w < run->nworkers; w++) {
        if (run->worker_host != NULL)
            fprintf(f, "3 %.9f w%zu W h%d \"%s\"\n", open_ms, w, run->worker_host[w], run->workers[w].name);
        else
            fprintf(f, "3 %.9f w%zu W m \"%s\"\n", open_ms, w, run->workers[w].name);
        fprintf(f, "5 %.9f S w%zu Id\n", open_ms, w);
    }
    for (size_t m = 0; m < run->nnodes; m++)
        fprintf(f, "3 %.9f n%zu N m \"%s\"\n", open_ms, m, run->node_names[m]);
    /* Three streams merged by time: worker states, link starts, link ends (a link starts before it ends). */
    size_t i = 0, s = 0, e = 0;
    while (i < k || s < run->ntransfers || e < run->ntransfers) {
        double ti = i < k ? fmax(ev[i].t_ms, t0_ms) : INFINITY;
        double ts = s < run->ntransfers ? run->transfers[s].start_us / 1e3 : INFINITY;
        double te = e < run->ntransfers ? ends[e].t_us / 1e3 : INFINITY;
        if (i < k && ti <= ts && ti <= te) {
            if (ev[i].worker >= 0 && (size_t)ev[i].worker < run->nworkers)
                fprintf(f, "5 %.9f S w%d %s\n", ti, ev[i].worker, ev[i].value);
            i++;
        } else if (s < run->ntransfers && (ts <= te || ends[e].index >= s)) {
            const struct dahlsim_trace_transfer *x = &run->transfers[s];
            fprintf(f, "7 %.9f L m %lld n%d t%zu\n", ts, x->bytes, x->src, s);
            s++;
        } else {
            const struct dahlsim_trace_transfer *x = &run->transfers[ends[e].index];
            fprintf(f, "8 %.9f L m %lld n%d t%zu\n", fmax(te, x->start_us / 1e3), x->bytes, x->dst, ends[e].index);
            e++;
        }
    }
    double close_ms = close_us / 1e3;
    for (size_t w = 0; w < run->nworkers; w++)
        fprintf(f, "4 %.9f W w%zu\n", close_ms, w);
    for (size_t m = 0; m < run->nnodes; m++)
        fprintf(f, "4 %.9f N n%zu\n", close_ms, m);
    for (int h = 0; run->worker_host != NULL && h < run->nhosts; h++)
        fprintf(f, "4 %.9f H h%d\n", close_ms, h);
    fprintf(f, "4 %.9f M m\n", close_ms);
    free(ev);
    free(ends);
    return close_checked(f, path, err, err_size);
}

/* ---- Chrome trace events ------------------------------------------------------------------------------------- */

static int write_chrome(const struct dahlsim_trace_run *run, const char *dir, char *err, size_t err_size)
{
    char path[PATH_MAX + 32];
    FILE *f = open_in(dir, "trace.json", path, sizeof(path), err, err_size);
    if (f == NULL)
        return -errno;
    fputs("{\"displayTimeUnit\": \"ms\", \"otherData\": {\"title\": \"", f);
    json_escape(f, run->title);
    fputs("\", \"clock\": \"StarPU clock, microseconds\"},\n\"traceEvents\": [\n", f);
    fputs("{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 0, \"args\": {\"name\": \"", f);
    json_escape(f, run->title);
    fputs("\"}}", f);
    for (size_t w = 0; w < run->nworkers; w++) {
        fprintf(f, ",\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 0, \"tid\": %zu, \"args\": {\"name\": \"", w);
        json_escape(f, run->workers[w].name);
        fprintf(f, "\"}},\n{\"name\": \"thread_sort_index\", \"ph\": \"M\", \"pid\": 0, \"tid\": %zu, \"args\": "
                   "{\"sort_index\": %zu}}",
                w, w);
    }
    for (size_t t = 0; t < run->ntasks; t++) {
        const struct dahl_profile_task *x = &run->tasks[t];
        if (x->fetch_us > 0)
            fprintf(f, ",\n{\"name\": \"fetching input\", \"cat\": \"transfer\", \"ph\": \"X\", \"ts\": %.3f, "
                       "\"dur\": %.3f, \"pid\": 0, \"tid\": %d}",
                    x->start_us - x->fetch_us, x->fetch_us, x->worker);
        fprintf(f, ",\n{\"name\": \"%s\", \"cat\": \"%s\", \"ph\": \"X\", \"ts\": %.3f, \"dur\": %.3f, \"pid\": 0, "
                   "\"tid\": %d, \"args\": {\"job\": %llu, \"step\": %ld, \"layer\": \"",
                x->codelet, pass_of(x->codelet), x->start_us, x->end_us - x->start_us, x->worker,
                (unsigned long long)x->job, x->step + 1);
        json_escape(f, layer_name(run, x->layer));
        fputs("\"}}", f);
    }
    /* Data transfers: one async slice per transfer (ids in start order) in a process of their own, named by
     * the link, so Perfetto shows one track per link beside the workers. */
    if (run->ntransfers > 0)
        fputs(",\n{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"args\": {\"name\": \"data transfers\"}}", f);
    for (size_t t = 0; t < run->ntransfers; t++) {
        const struct dahlsim_trace_transfer *x = &run->transfers[t];
        for (int half = 0; half < 2; half++) {
            fputs(",\n{\"name\": \"", f);
            json_escape(f, run->node_names[x->src]);
            fputs(" -> ", f);
            json_escape(f, run->node_names[x->dst]);
            fprintf(f, "\", \"cat\": \"transfer\", \"ph\": \"%s\", \"id\": %zu, \"ts\": %.3f, \"pid\": 1, \"tid\": 0",
                    half == 0 ? "b" : "e", t, half == 0 ? x->start_us : x->end_us);
            if (half == 0)
                fprintf(f, ", \"args\": {\"bytes\": %lld, \"kind\": \"%s\"}", x->bytes, x->kind);
            fputc('}', f);
        }
    }
    fputs("\n]}\n", f);
    return close_checked(f, path, err, err_size);
}

/* ---- Gantt ----------------------------------------------------------------------------------------------------- */

static int write_gantt(const struct dahlsim_trace_run *run, const char *const *codelets, size_t ncodelets,
                       double t0_us, double t1_us, const char *dir, char *err, size_t err_size)
{
    char path[PATH_MAX + 32];
    FILE *f = open_in(dir, "gantt.dat", path, sizeof(path), err, err_size);
    if (f == NULL)
        return -errno;
    /* One gnuplot data block per codelet (index c), then the idle background (index ncodelets). Tasks of one
     * codelet on one worker closer than a pixel merge into one box, so huge runs stay drawable. */
    double merge_us = (t1_us - t0_us) / GANTT_MAX_BOXES_PER_ROW;
    for (size_t c = 0; c < ncodelets; c++) {
        fprintf(f, "# %s\n", codelets[c]);
        for (size_t w = 0; w < run->nworkers; w++) {
            double box_start = -1, box_end = -1;
            for (size_t t = 0; t < run->ntasks; t++) {
                const struct dahl_profile_task *x = &run->tasks[t];
                if (x->worker != (int)w || strcmp(x->codelet, codelets[c]) != 0)
                    continue;
                if (box_start >= 0 && x->start_us - box_end <= merge_us) {
                    if (x->end_us > box_end)
                        box_end = x->end_us;
                    continue;
                }
                if (box_start >= 0)
                    fprintf(f, "%.6f %zu %.6f 0.4\n", (box_start + box_end) / 2e3, w, (box_end - box_start) / 2e3);
                box_start = x->start_us;
                box_end = x->end_us;
            }
            if (box_start >= 0)
                fprintf(f, "%.6f %zu %.6f 0.4\n", (box_start + box_end) / 2e3, w, (box_end - box_start) / 2e3);
        }
        fputs("\n\n", f);
    }
    fputs("# idle\n", f);
    for (size_t w = 0; w < run->nworkers; w++)
        fprintf(f, "%.6f %zu %.6f 0.4\n", (t0_us + t1_us) / 2e3, w, (t1_us - t0_us) / 2e3);
    int ret = close_checked(f, path, err, err_size);
    if (ret != 0)
        return ret;

    f = open_in(dir, "gantt.gp", path, sizeof(path), err, err_size);
    if (f == NULL)
        return -errno;
    size_t rows = run->nworkers > 0 ? run->nworkers : 1;
    int height = 160 + 28 * (int)rows;
    fputs("# The Gantt chart of one run: one row per worker, one colour per codelet, idle time in light grey.\n"
          "# Rendered by dahlsim (gnuplot gantt.gp in this directory).\n", f);
    fprintf(f, "set title \"");
    for (const char *p = run->title; *p != '\0'; p++)
        if (*p != '"' && *p != '\\')
            fputc(*p, f);
    fputs("\" noenhanced\n", f);
    fprintf(f, "set xlabel \"time (ms, StarPU clock%s)\"\nset xrange [%.6f:%.6f]\nset yrange [-0.6:%zu.6]\n",
            strstr(run->title, "simulated") != NULL ? ": simulated" : "", t0_us / 1e3, t1_us / 1e3, rows - 1);
    fputs("set ytics (", f);
    for (size_t w = 0; w < run->nworkers; w++)
        fprintf(f, "%s\"%s\" %zu", w > 0 ? ", " : "", run->workers[w].name, w);
    fputs(")\nset ytics nomirror\nset grid xtics\nset style fill solid 1.0 noborder\n"
          "set key outside below center horizontal noenhanced\n",
          f);
    fputs("plot 'gantt.dat' index ", f);
    fprintf(f, "%zu using 1:2:3:4 with boxxyerror lc rgb \"%s\" title \"idle\"", ncodelets, IDLE_COLOUR);
    for (size_t c = 0; c < ncodelets; c++)
        fprintf(f, ", \\\n     '' index %zu using 1:2:3:4 with boxxyerror lc rgb \"%s\" title \"%s\"", c,
                palette[c % NPALETTE], codelets[c]);
    fputc('\n', f);
    fprintf(f, "# terminals, set by dahlsim when rendering: png size 1400,%d and svg size 1400,%d\n", height, height);
    return close_checked(f, path, err, err_size);
}

/* ---- multi-node: records saved per rank, merged by the front end ------------------------------------------- */

int dahlsim_trace_records_save(const struct dahlsim_trace_run *run, const char *dir, char *err, size_t err_size)
{
    char path[PATH_MAX + 32];
    FILE *f = open_in(dir, "records.tsv", path, sizeof(path), err, err_size);
    if (f == NULL)
        return -errno;
    /* Tab-separated; times with 17 digits so the merged trace has exactly the node's times. */
    fprintf(f, "dahl-trace-records\t1\ntitle\t%s\nsteps\t%ld\t%ld\n", run->title, run->first_step, run->last_step);
    for (size_t w = 0; w < run->nworkers; w++)
        fprintf(f, "worker\t%s\t%s\n", run->workers[w].arch, run->workers[w].name);
    for (int l = 0; run->layer_names != NULL && l <= run->nlayers; l++)
        fprintf(f, "layer\t%s\n", run->layer_names[l]);
    for (size_t t = 0; t < run->ntasks; t++) {
        const struct dahl_profile_task *x = &run->tasks[t];
        fprintf(f, "task\t%llu\t%s\t%d\t%d\t%ld\t%.17g\t%.17g\t%.17g\t%.17g\n", (unsigned long long)x->job, x->codelet,
                x->worker, x->layer, x->step, x->start_us, x->end_us, x->fetch_us, x->pop_us);
    }
    return close_checked(f, path, err, err_size);
}

/* Strings the merged records point to (codelet and layer names), kept until the merge is written. */
struct interned {
    char **s;
    size_t n, cap;
};

static const char *intern(struct interned *in, const char *text)
{
    for (size_t i = 0; i < in->n; i++)
        if (strcmp(in->s[i], text) == 0)
            return in->s[i];
    if (in->n == in->cap) {
        size_t cap = in->cap > 0 ? 2 * in->cap : 64;
        char **grown = realloc(in->s, cap * sizeof(*grown));
        if (grown == NULL)
            return NULL;
        in->s = grown;
        in->cap = cap;
    }
    char *copy = strdup(text);
    if (copy != NULL)
        in->s[in->n++] = copy;
    return copy;
}

int dahlsim_trace_merge_nodes(const char *dir, int nodes, char *err, size_t err_size)
{
    struct interned names = {0};
    struct dahl_worker_stats *workers = NULL;
    int *host = NULL;
    struct dahl_profile_task *tasks = NULL;
    size_t nworkers = 0, wcap = 0, ntasks = 0, tcap = 0;
    const char *layers[256];
    int nlayers = -1;
    long first = -1, last = -1;
    char title[600] = "";
    int ret = 0;
    for (int h = 0; h < nodes && ret == 0; h++) {
        char path[PATH_MAX + 64];
        snprintf(path, sizeof(path), "%s/node-%d/records.tsv", dir, h);
        FILE *f = fopen(path, "r");
        if (f == NULL) {
            ret = -errno;
            snprintf(err, err_size, "%s: %s (every node's records are needed to merge the trace)", path,
                     strerror(errno));
            break;
        }
        size_t base = nworkers;
        int node_layers = 0;
        char line[4096];
        bool header = false;
        while (ret == 0 && fgets(line, sizeof(line), f) != NULL) {
            line[strcspn(line, "\r\n")] = '\0';
            char *tab = strchr(line, '\t');
            if (tab == NULL)
                continue;
            *tab = '\0';
            char *rest = tab + 1;
            if (strcmp(line, "dahl-trace-records") == 0) {
                header = strcmp(rest, "1") == 0;
            } else if (!header) {
                break;
            } else if (strcmp(line, "title") == 0) {
                if (h == 0)
                    snprintf(title, sizeof(title), "%d nodes: %s", nodes, rest);
            } else if (strcmp(line, "steps") == 0) {
                sscanf(rest, "%ld\t%ld", &first, &last);
            } else if (strcmp(line, "worker") == 0) {
                char *name = strchr(rest, '\t');
                if (name == NULL)
                    continue;
                *name++ = '\0';
                if (nworkers == wcap) {
                    wcap = wcap > 0 ? 2 * wcap : 64;
                    struct dahl_worker_stats *gw = realloc(workers, wcap * sizeof(*gw));
                    int *gh = gw != NULL ? realloc(host, wcap * sizeof(*gh)) : NULL;
                    if (gw != NULL)
                        workers = gw;
                    if (gh == NULL) {
                        ret = -ENOMEM;
                        break;
                    }
                    host = gh;
                }
                struct dahl_worker_stats *w = &workers[nworkers];
                *w = (struct dahl_worker_stats){.id = (int)nworkers};
                snprintf(w->name, sizeof(w->name), "node %d %s", h, name);
                w->arch = strcmp(rest, "cpu") == 0 ? "cpu" : strcmp(rest, "cuda") == 0 ? "cuda" : "other";
                host[nworkers++] = h;
            } else if (strcmp(line, "layer") == 0) {
                if (node_layers < 256) {
                    const char *l = intern(&names, rest);
                    if (l == NULL) {
                        ret = -ENOMEM;
                        break;
                    }
                    layers[node_layers++] = l;
                }
            } else if (strcmp(line, "task") == 0) {
                unsigned long long job;
                char codelet[128];
                struct dahl_profile_task x;
                if (sscanf(rest, "%llu\t%127s\t%d\t%d\t%ld\t%lf\t%lf\t%lf\t%lf", &job, codelet, &x.worker, &x.layer,
                           &x.step, &x.start_us, &x.end_us, &x.fetch_us, &x.pop_us) != 9) {
                    ret = -EINVAL;
                    snprintf(err, err_size, "%s: a task line does not read: %s", path, rest);
                    break;
                }
                x.job = job;
                x.codelet = intern(&names, codelet);
                if (x.codelet == NULL) {
                    ret = -ENOMEM;
                    break;
                }
                x.worker = x.worker >= 0 ? x.worker + (int)base : x.worker;
                if (ntasks == tcap) {
                    tcap = tcap > 0 ? 2 * tcap : 4096;
                    struct dahl_profile_task *g = realloc(tasks, tcap * sizeof(*g));
                    if (g == NULL) {
                        ret = -ENOMEM;
                        break;
                    }
                    tasks = g;
                }
                tasks[ntasks++] = x;
            }
        }
        fclose(f);
        if (ret == 0 && !header) {
            ret = -EINVAL;
            snprintf(err, err_size, "%s: expected a dahl-trace-records file, version 1", path);
        }
        if (ret == -ENOMEM)
            snprintf(err, err_size, "%s: out of memory", path);
        if (ret == 0 && nlayers < 0)
            nlayers = node_layers - 1; /* every node trains the same network */
    }
    if (ret == 0) {
        struct dahlsim_trace_run run = {
            .title = title,
            .workers = workers,
            .nworkers = nworkers,
            .tasks = tasks,
            .ntasks = ntasks,
            .layer_names = nlayers >= 0 ? layers : NULL,
            .nlayers = nlayers >= 0 ? nlayers : 0,
            .first_step = first,
            .last_step = last,
            .worker_host = host,
            .nhosts = nodes,
        };
        ret = dahlsim_trace_write(&run, dir, err, err_size);
    }
    for (size_t i = 0; i < names.n; i++)
        free(names.s[i]);
    free(names.s);
    free(workers);
    free(host);
    free(tasks);
    return ret;
}

/* The gnuplot on PATH, into buf. */
static bool find_gnuplot(char *buf, size_t size)
{
    const char *path = getenv("PATH");
    if (path == NULL)
        path = "/usr/bin:/bin";
    while (*path != '\0') {
        const char *colon = strchr(path, ':');
        size_t len = colon != NULL ? (size_t)(colon - path) : strlen(path);
        if (len > 0 && (size_t)snprintf(buf, size, "%.*s/gnuplot", (int)len, path) < size && access(buf, X_OK) == 0)
            return true;
        path += len + (colon != NULL);
    }
    return false;
}

int dahlsim_trace_render(const char *dir, char *err, size_t err_size)
{
    char gnuplot[PATH_MAX];
    if (!find_gnuplot(gnuplot, sizeof(gnuplot))) {
        snprintf(err, err_size, "gnuplot not found on PATH: no Gantt chart images in %s", dir);
        return -1;
    }
    if (strchr(dir, '\'') != NULL) {
        snprintf(err, err_size, "%s: a directory name with a quote cannot be given to gnuplot", dir);
        return -1;
    }
    char script[PATH_MAX + 16];
    snprintf(script, sizeof(script), "%s/gantt.gp", dir);
    FILE *f = fopen(script, "r");
    if (f == NULL) {
        snprintf(err, err_size, "%s: %s", script, strerror(errno));
        return -1;
    }
    int height = 0;
    char line[1024];
    while (fgets(line, sizeof(line), f) != NULL)
        if (sscanf(line, "# terminals, set by dahlsim when rendering: png size 1400,%d", &height) == 1)
            break;
    fclose(f);
    if (height <= 0)
        height = 400;
    char cmd[2 * PATH_MAX + 512], log[PATH_MAX + 32];
    snprintf(cmd, sizeof(cmd),
             "cd '%s'; set terminal pngcairo size 1400,%d font 'sans,10'; set output 'gantt.png'; load 'gantt.gp'; "
             "set terminal svg size 1400,%d font 'sans,10' background rgb 'white'; set output 'gantt.svg'; replot; "
             "set output",
             dir, height, height);
    snprintf(log, sizeof(log), "%s/gnuplot.log", dir);
    char *argv[] = {gnuplot, "-e", cmd, NULL};
    int status = dahlsim_spawn_err(argv, NULL, 0, NULL, 0, log);
    if (status != 0) {
        snprintf(err, err_size, "gnuplot failed (exit %d) on %s; see %s", status, script, log);
        return -1;
    }
    unlink(log);
    return 0;
}

/* ---- FxT comparison ------------------------------------------------------------------------------------------ */

struct fxt_task {
    uint64_t job;
    int worker;
    double start_us, end_us;
};

static int fxt_cmp(const void *pa, const void *pb)
{
    const struct fxt_task *a = pa, *b = pb;
    return a->job < b->job ? -1 : a->job > b->job;
}

static int double_cmp(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return a < b ? -1 : a > b;
}

static int job_cmp(const void *pa, const void *pb)
{
    const struct dahl_profile_task *const *a = pa, *const *b = pb;
    return (*a)->job < (*b)->job ? -1 : (*a)->job > (*b)->job;
}

int dahlsim_trace_compare_fxt(const char *tasks_rec, const struct dahl_profile_task *tasks, size_t ntasks,
                              struct dahlsim_trace_fxt *out, char *err, size_t err_size)
{
    *out = (struct dahlsim_trace_fxt){0};
    FILE *f = fopen(tasks_rec, "r");
    if (f == NULL) {
        int e = errno;
        snprintf(err, err_size, "%s: %s", tasks_rec, strerror(e));
        return -e;
    }
    size_t n = 0, cap = 4096;
    struct fxt_task *ft = malloc(cap * sizeof(*ft));
    if (ft == NULL) {
        fclose(f);
        snprintf(err, err_size, "%s: out of memory", tasks_rec);
        return -ENOMEM;
    }
    /* Records are "Key: value" lines separated by blank lines; a task that ran has WorkerId and times. */
    struct fxt_task cur = {.worker = -1};
    bool has_job = false, has_start = false, has_end = false;
    char line[8192];
    int ret = 0;
    for (;;) {
        bool eof = fgets(line, sizeof(line), f) == NULL;
        if (eof || line[0] == '\n') {
            if (has_job && has_start && has_end && cur.worker >= 0) {
                if (n == cap) {
                    cap *= 2;
                    struct fxt_task *grown = realloc(ft, cap * sizeof(*ft));
                    if (grown == NULL) {
                        ret = -ENOMEM;
                        snprintf(err, err_size, "%s: out of memory", tasks_rec);
                        break;
                    }
                    ft = grown;
                }
                ft[n++] = cur;
            }
            cur = (struct fxt_task){.worker = -1};
            has_job = has_start = has_end = false;
            if (eof)
                break;
            continue;
        }
        unsigned long long u;
        double d;
        int w;
        if (sscanf(line, "JobId: %llu", &u) == 1) {
            cur.job = u;
            has_job = true;
        } else if (sscanf(line, "WorkerId: %d", &w) == 1) {
            cur.worker = w;
        } else if (sscanf(line, "StartTime: %lf", &d) == 1) {
            cur.start_us = d * 1e3; /* tasks.rec times are milliseconds */
            has_start = true;
        } else if (sscanf(line, "EndTime: %lf", &d) == 1) {
            cur.end_us = d * 1e3;
            has_end = true;
        }
    }
    fclose(f);
    if (ret != 0) {
        free(ft);
        return ret;
    }
    const struct dahl_profile_task **mine = malloc((ntasks > 0 ? ntasks : 1) * sizeof(*mine));
    if (mine == NULL) {
        free(ft);
        snprintf(err, err_size, "%s: out of memory", tasks_rec);
        return -ENOMEM;
    }
    for (size_t i = 0; i < ntasks; i++)
        mine[i] = &tasks[i];
    qsort(mine, ntasks, sizeof(*mine), job_cmp);
    qsort(ft, n, sizeof(*ft), fxt_cmp);
    out->present = true;
    out->fxt_tasks = (long)n;
    /* pair[i]: the FxT task of mine[i], or -1 */
    long *pair = malloc((ntasks > 0 ? ntasks : 1) * sizeof(*pair));
    double *d = malloc((2 * ntasks + 1) * sizeof(*d));
    if (pair == NULL || d == NULL) {
        free(pair);
        free(d);
        free(mine);
        free(ft);
        snprintf(err, err_size, "%s: out of memory", tasks_rec);
        return -ENOMEM;
    }
    size_t j = 0, m = 0;
    for (size_t i = 0; i < ntasks; i++) {
        while (j < n && ft[j].job < mine[i]->job)
            j++;
        pair[i] = j < n && ft[j].job == mine[i]->job ? (long)j : -1;
        if (pair[i] < 0) {
            out->missing++;
            continue;
        }
        out->matched++;
        if (ft[j].worker != mine[i]->worker)
            out->worker_mismatches++;
        d[m++] = ft[j].start_us - mine[i]->start_us;
    }
    /* The two clocks may have different origins (natively, FxT's clock is not StarPU's): the median
     * difference is the offset; what remains is disagreement. */
    if (m > 0) {
        qsort(d, m, sizeof(*d), double_cmp);
        out->offset_us = d[m / 2];
    }
    m = 0;
    for (size_t i = 0; i < ntasks; i++) {
        if (pair[i] < 0)
            continue;
        double ds = fabs(ft[pair[i]].start_us - mine[i]->start_us - out->offset_us);
        double de = fabs(ft[pair[i]].end_us - mine[i]->end_us - out->offset_us);
        out->max_start_diff_us = fmax(out->max_start_diff_us, ds);
        out->max_end_diff_us = fmax(out->max_end_diff_us, de);
        d[m++] = ds;
        d[m++] = de;
    }
    if (m > 0) {
        qsort(d, m, sizeof(*d), double_cmp);
        out->p99_diff_us = d[(size_t)(0.99 * (double)(m - 1))];
    }
    free(d);
    free(pair);
    free(mine);
    free(ft);
    return 0;
}

/* ---- putting a Paje file in time order ------------------------------------------------------------------- */

struct paje_line {
    const char *text; /* into the file's buffer, NUL-terminated (the newline replaced) */
    double t;         /* its time, or the previous timed line's for lines without one */
    size_t index;     /* original position: equal times keep their order */
};

static int paje_line_cmp(const void *pa, const void *pb)
{
    const struct paje_line *a = pa, *b = pb;
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

int dahlsim_trace_paje_sort(const char *path, long *moved, char *err, size_t err_size)
{
    *moved = 0;
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        int e = errno;
        snprintf(err, err_size, "%s: %s", path, strerror(e));
        return -e;
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    rewind(f);
    char *buf = size >= 0 ? malloc((size_t)size + 1) : NULL;
    if (buf == NULL || fread(buf, 1, (size_t)size, f) != (size_t)size) {
        fclose(f);
        free(buf);
        snprintf(err, err_size, "%s: cannot read it", path);
        return -EIO;
    }
    fclose(f);
    buf[size] = '\0';
    size_t nlines = 0;
    for (long i = 0; i < size; i++)
        nlines += buf[i] == '\n';
    struct paje_line *lines = malloc((nlines + 1) * sizeof(*lines));
    if (lines == NULL) {
        free(buf);
        snprintf(err, err_size, "%s: out of memory", path);
        return -ENOMEM;
    }
    /* Which event ids carry a time as their first field, from the %EventDef blocks. */
    enum { MAX_IDS = 1024 };
    static bool timed[MAX_IDS];
    memset(timed, 0, sizeof(timed));
    int def_id = -1, def_field = 0;
    size_t n = 0;
    double last_t = -INFINITY, max_t = -INFINITY;
    for (char *p = buf; *p != '\0';) {
        char *eol = strchr(p, '\n');
        if (eol != NULL)
            *eol = '\0';
        if (p[0] == '%') {
            char name[64], kind[64];
            int id;
            if (sscanf(p, "%%EventDef %63s %d", name, &id) == 2) {
                def_id = id;
                def_field = 0;
            } else if (strncmp(p, "%EndEventDef", 12) == 0) {
                def_id = -1;
            } else if (def_id >= 0 && sscanf(p, "%% %63s %63s", name, kind) == 2) {
                if (def_field == 0 && strcmp(kind, "date") == 0 && def_id < MAX_IDS)
                    timed[def_id] = true;
                def_field++;
            }
        } else {
            int id;
            double t;
            if (sscanf(p, "%d %lf", &id, &t) == 2 && id >= 0 && id < MAX_IDS && timed[id]) {
                if (t < max_t)
                    (*moved)++; /* earlier than an event before it */
                max_t = fmax(max_t, t);
                last_t = t;
            }
        }
        lines[n] = (struct paje_line){.text = p, .t = last_t, .index = n};
        n++;
        if (eol == NULL)
            break;
        p = eol + 1;
    }
    int ret = 0;
    if (*moved > 0) {
        qsort(lines, n, sizeof(*lines), paje_line_cmp);
        char tmp[PATH_MAX + 8];
        snprintf(tmp, sizeof(tmp), "%s.tmp", path);
        FILE *o = fopen(tmp, "w");
        if (o == NULL) {
            ret = -errno;
            snprintf(err, err_size, "%s: %s", tmp, strerror(errno));
        } else {
            for (size_t i = 0; i < n; i++) {
                fputs(lines[i].text, o);
                fputc('\n', o);
            }
            ret = close_checked(o, tmp, err, err_size);
            if (ret == 0 && rename(tmp, path) != 0) {
                ret = -errno;
                snprintf(err, err_size, "%s: %s", path, strerror(errno));
            }
            if (ret != 0)
                unlink(tmp);
        }
    }
    free(lines);
    free(buf);
    return ret;
}

/* ---- data transfers from StarPU's FxT Paje trace ------------------------------------------------------- */

/* Splits a Paje event line into at most max fields (whitespace separated, "quoted" fields kept whole, quotes
 * removed), in place. Returns the count. */
static int paje_fields(char *line, char **fields, int max)
{
    int n = 0;
    char *p = line;
    while (*p != '\0' && n < max) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '\0')
            break;
        if (*p == '"') {
            fields[n++] = ++p;
            while (*p != '\0' && *p != '"')
                p++;
        } else {
            fields[n++] = p;
            while (*p != '\0' && *p != ' ' && *p != '\t')
                p++;
        }
        if (*p != '\0')
            *p++ = '\0';
    }
    return n;
}

/* Where the fields of one link event definition are (-1: absent). */
struct link_def {
    int id;
    bool start;
    int time, type, value, container, key;
};

struct link_half {
    char key[32];
    double t_ms;
    int node;
    long long bytes;
    const char *kind;
};

static int link_half_cmp(const void *pa, const void *pb)
{
    return strcmp(((const struct link_half *)pa)->key, ((const struct link_half *)pb)->key);
}

static int transfer_cmp(const void *pa, const void *pb)
{
    const struct dahlsim_trace_transfer *a = pa, *b = pb;
    if (a->start_us != b->start_us)
        return a->start_us < b->start_us ? -1 : 1;
    if (a->end_us != b->end_us)
        return a->end_us < b->end_us ? -1 : 1;
    if (a->src != b->src)
        return a->src - b->src;
    if (a->dst != b->dst)
        return a->dst - b->dst;
    return a->bytes < b->bytes ? -1 : a->bytes > b->bytes;
}

int dahlsim_trace_fxt_transfers(const char *paje_trace, double offset_us, const double *windows, size_t nwindows,
                                struct dahlsim_trace_transfer **out, size_t *n, char *err, size_t err_size)
{
    *out = NULL;
    *n = 0;
    FILE *f = fopen(paje_trace, "r");
    if (f == NULL) {
        int e = errno;
        snprintf(err, err_size, "%s: %s", paje_trace, strerror(e));
        return -e;
    }
    enum { MAX_DEFS = 8 };
    struct link_def defs[MAX_DEFS];
    int ndefs = 0, field = 0;
    struct link_def *cur = NULL; /* the link event definition being read */
    struct link_half *half[2] = {NULL, NULL}; /* [0] starts, [1] ends */
    size_t nhalf[2] = {0, 0}, cap[2] = {0, 0};
    int ret = 0;
    char line[8192];
    while (ret == 0 && fgets(line, sizeof(line), f) != NULL) {
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0] == '%') {
            char name[64], kind[64];
            int id;
            if (sscanf(line, "%%EventDef %63s %d", name, &id) == 2) {
                cur = NULL;
                bool start = strcmp(name, "PajeStartLink") == 0;
                if ((start || strcmp(name, "PajeEndLink") == 0) && ndefs < MAX_DEFS) {
                    cur = &defs[ndefs++];
                    *cur = (struct link_def){id, start, -1, -1, -1, -1, -1};
                    field = 0;
                }
            } else if (strncmp(line, "%EndEventDef", 12) == 0) {
                cur = NULL;
            } else if (cur != NULL && sscanf(line, "%% %63s %63s", name, kind) == 2) {
                int *slot = strcmp(name, "Time") == 0                                          ? &cur->time
                            : strcmp(name, "Type") == 0                                        ? &cur->type
                            : strcmp(name, "Value") == 0                                       ? &cur->value
                            : strcmp(name, "Key") == 0                                         ? &cur->key
                            : strcmp(name, cur->start ? "StartContainer" : "EndContainer") == 0 ? &cur->container
                                                                                               : NULL;
                if (slot != NULL)
                    *slot = field + 1; /* field 0 is the event id */
                field++;
            }
            continue;
        }
        int id;
        if (ndefs == 0 || sscanf(line, "%d", &id) != 1)
            continue;
        const struct link_def *d = NULL;
        for (int i = 0; i < ndefs && d == NULL; i++)
            if (defs[i].id == id)
                d = &defs[i];
        if (d == NULL || d->time < 0 || d->type < 0 || d->value < 0 || d->container < 0 || d->key < 0)
            continue;
        char *fl[16];
        int nf = paje_fields(line, fl, 16);
        if (nf <= d->time || nf <= d->type || nf <= d->value || nf <= d->container || nf <= d->key)
            continue;
        /* StarPU's link types for data copies: F (fetch), PF (prefetch), IF (idle fetch); others (work
         * stealing, MPI) are not transfers between this process's memory nodes. */
        const char *type = fl[d->type];
        const char *kind = strcmp(type, "F") == 0    ? "fetch"
                           : strcmp(type, "PF") == 0 ? "prefetch"
                           : strcmp(type, "IF") == 0 ? "idle fetch"
                                                     : NULL;
        const char *mm = strstr(fl[d->container], "mm"); /* "mm0", or "<prefix>mm0" */
        char *end = NULL;
        long node = mm != NULL ? strtol(mm + 2, &end, 10) : -1;
        if (kind == NULL || node < 0 || *end != '\0')
            continue;
        int side = d->start ? 0 : 1;
        if (nhalf[side] == cap[side]) {
            cap[side] = cap[side] > 0 ? 2 * cap[side] : 1024;
            struct link_half *grown = realloc(half[side], cap[side] * sizeof(*grown));
            if (grown == NULL) {
                snprintf(err, err_size, "%s: out of memory", paje_trace);
                ret = -ENOMEM;
                break;
            }
            half[side] = grown;
        }
        struct link_half *h = &half[side][nhalf[side]++];
        snprintf(h->key, sizeof(h->key), "%s", fl[d->key]);
        h->t_ms = strtod(fl[d->time], NULL);
        h->node = (int)node;
        h->bytes = strtoll(fl[d->value], NULL, 10);
        h->kind = kind;
    }
    fclose(f);
    struct dahlsim_trace_transfer *tr = NULL;
    size_t k = 0;
    if (ret == 0 && nhalf[0] > 0) {
        tr = malloc(nhalf[0] * sizeof(*tr));
        if (tr == NULL) {
            snprintf(err, err_size, "%s: out of memory", paje_trace);
            ret = -ENOMEM;
        }
    }
    if (ret == 0 && nhalf[0] > 0) {
        qsort(half[0], nhalf[0], sizeof(*half[0]), link_half_cmp);
        if (nhalf[1] > 0)
            qsort(half[1], nhalf[1], sizeof(*half[1]), link_half_cmp);
        size_t j = 0;
        for (size_t i = 0; i < nhalf[0]; i++) {
            const struct link_half *a = &half[0][i];
            while (j < nhalf[1] && strcmp(half[1][j].key, a->key) < 0)
                j++;
            if (j == nhalf[1] || strcmp(half[1][j].key, a->key) != 0)
                continue; /* never ended inside the recording (a window's last step) */
            const struct link_half *b = &half[1][j];
            struct dahlsim_trace_transfer t = {
                .src = a->node,
                .dst = b->node,
                .bytes = a->bytes,
                .start_us = a->t_ms * 1e3 - offset_us,
                .end_us = fmax(b->t_ms, a->t_ms) * 1e3 - offset_us,
                .kind = a->kind,
            };
            bool keep = nwindows == 0;
            for (size_t w = 0; w < nwindows && !keep; w++)
                keep = t.start_us >= windows[2 * w] && t.start_us <= windows[2 * w + 1];
            if (keep)
                tr[k++] = t;
        }
        if (k > 0)
            qsort(tr, k, sizeof(*tr), transfer_cmp);
    }
    free(half[0]);
    free(half[1]);
    if (ret != 0) {
        free(tr);
        return ret;
    }
    *out = tr;
    *n = k;
    return 0;
}

/* ---- summary ----------------------------------------------------------------------------------------------------- */

struct worker_sum {
    long tasks;
    double busy_us, fetch_us, pop_us;
    double per_codelet_us[MAX_CODELETS];
};

/* One (layer, pass): its tasks per step, and the first-to-last time of each step summed. */
struct group_sum {
    int layer;
    const char *pass;
    long tasks;
    double busy_us;
    long steps;                   /* steps with at least one task */
    double span_sum_us, span_max_us;
    long cur_step;                /* the step being accumulated (tasks come sorted by step) */
    double cur_first, cur_last;
};

static int group_cmp(const void *pa, const void *pb)
{
    const struct group_sum *a = pa, *b = pb;
    int la = a->layer < 0 ? 1 << 20 : a->layer, lb = b->layer < 0 ? 1 << 20 : b->layer;
    if (la != lb)
        return la - lb;
    return strcmp(a->pass, b->pass);
}

static int step_cmp(const void *pa, const void *pb)
{
    const struct dahl_profile_task *const *a = pa, *const *b = pb;
    if ((*a)->step != (*b)->step)
        return (*a)->step < (*b)->step ? -1 : 1;
    if ((*a)->start_us != (*b)->start_us)
        return (*a)->start_us < (*b)->start_us ? -1 : 1;
    return (*a)->job < (*b)->job ? -1 : (*a)->job > (*b)->job;
}

static void group_close(struct group_sum *g)
{
    if (g->cur_step < 0)
        return;
    double span = g->cur_last - g->cur_first;
    g->span_sum_us += span;
    if (span > g->span_max_us)
        g->span_max_us = span;
    g->steps++;
    g->cur_step = -1;
}

/* Transfers summed per link (src, dst), in (src, dst) order. */
struct link_sum {
    int src, dst;
    long transfers;
    long long bytes;
    double busy_us;
};

static size_t link_sums(const struct dahlsim_trace_run *run, struct link_sum *sums, size_t max)
{
    size_t n = 0;
    for (size_t t = 0; t < run->ntransfers; t++) {
        const struct dahlsim_trace_transfer *x = &run->transfers[t];
        size_t i = 0;
        while (i < n && !(sums[i].src == x->src && sums[i].dst == x->dst))
            i++;
        if (i == n) {
            if (n == max)
                continue;
            size_t j = n++; /* insertion in (src, dst) order */
            while (j > 0 && (sums[j - 1].src > x->src || (sums[j - 1].src == x->src && sums[j - 1].dst > x->dst))) {
                sums[j] = sums[j - 1];
                j--;
            }
            sums[j] = (struct link_sum){.src = x->src, .dst = x->dst};
            i = j;
        }
        sums[i].transfers++;
        sums[i].bytes += x->bytes;
        sums[i].busy_us += x->end_us - x->start_us;
    }
    return n;
}

static int write_summary(const struct dahlsim_trace_run *run, const char *const *codelets, size_t ncodelets,
                         double t0_us, double t1_us, const char *dir, char *err, size_t err_size)
{
    struct worker_sum *ws = calloc(run->nworkers + 1, sizeof(*ws));
    size_t gcap = 4 * (size_t)(run->nlayers + 2) + 8, ng = 0;
    struct group_sum *gs = calloc(gcap, sizeof(*gs));
    const struct dahl_profile_task **by_step = malloc((run->ntasks + 1) * sizeof(*by_step));
    if (ws == NULL || gs == NULL || by_step == NULL) {
        free(ws);
        free(gs);
        free(by_step);
        snprintf(err, err_size, "%s/summary.json: out of memory", dir);
        return -ENOMEM;
    }
    double busy_total = 0;
    for (size_t t = 0; t < run->ntasks; t++) {
        const struct dahl_profile_task *x = &run->tasks[t];
        by_step[t] = x;
        if (x->worker < 0 || (size_t)x->worker >= run->nworkers)
            continue;
        struct worker_sum *w = &ws[x->worker];
        double d = x->end_us - x->start_us;
        w->tasks++;
        w->busy_us += d;
        w->fetch_us += x->fetch_us;
        w->pop_us += x->pop_us;
        size_t c = codelet_index(codelets, ncodelets, x->codelet);
        if (c < ncodelets)
            w->per_codelet_us[c] += d;
        busy_total += d;
    }
    qsort(by_step, run->ntasks, sizeof(*by_step), step_cmp);
    for (size_t t = 0; t < run->ntasks; t++) {
        const struct dahl_profile_task *x = by_step[t];
        const char *pass = pass_of(x->codelet);
        size_t g = 0;
        while (g < ng && !(gs[g].layer == x->layer && strcmp(gs[g].pass, pass) == 0))
            g++;
        if (g == ng) {
            if (ng == gcap)
                continue;
            gs[ng++] = (struct group_sum){.layer = x->layer, .pass = pass, .cur_step = -1};
        }
        struct group_sum *s = &gs[g];
        if (s->cur_step != x->step) {
            group_close(s);
            s->cur_step = x->step;
            s->cur_first = x->start_us;
            s->cur_last = x->end_us;
        }
        if (x->start_us < s->cur_first)
            s->cur_first = x->start_us;
        if (x->end_us > s->cur_last)
            s->cur_last = x->end_us;
        s->tasks++;
        s->busy_us += x->end_us - x->start_us;
    }
    for (size_t g = 0; g < ng; g++)
        group_close(&gs[g]);
    qsort(gs, ng, sizeof(*gs), group_cmp);
    free(by_step);

    double span_us = t1_us > t0_us ? t1_us - t0_us : 0;
    double efficiency = span_us > 0 && run->nworkers > 0 ? busy_total / (span_us * (double)run->nworkers) : 0;
    char path[PATH_MAX + 32];
    FILE *f = open_in(dir, "summary.json", path, sizeof(path), err, err_size);
    int ret = 0;
    if (f == NULL) {
        ret = -errno;
        goto out;
    }
    fputs("{\n  \"title\": \"", f);
    json_escape(f, run->title);
    fprintf(f, "\",\n  \"steps\": {\"first\": %ld, \"last\": %ld},\n", run->first_step + 1, run->last_step + 1);
    fprintf(f, "  \"tasks\": %zu,\n  \"start_s\": %.9f,\n  \"end_s\": %.9f,\n  \"span_s\": %.9f,\n", run->ntasks,
            t0_us / 1e6, t1_us / 1e6, span_us / 1e6);
    fprintf(f, "  \"busy_s\": %.9f,\n  \"parallel_efficiency\": %.6f,\n", busy_total / 1e6, efficiency);
    fputs("  \"workers\": [", f);
    for (size_t w = 0; w < run->nworkers; w++) {
        const struct worker_sum *s = &ws[w];
        double idle = span_us - s->busy_us - s->fetch_us - s->pop_us;
        fprintf(f, "%s\n    {\"id\": %zu, \"name\": \"", w > 0 ? "," : "", w);
        json_escape(f, run->workers[w].name);
        fprintf(f, "\", \"arch\": \"%s\", \"tasks\": %ld, \"busy_s\": %.9f, \"idle_s\": %.9f, \"transfer_wait_s\": %.9f, "
                   "\"scheduler_s\": %.9f, \"utilisation\": %.6f, \"per_codelet_s\": {",
                run->workers[w].arch, s->tasks, s->busy_us / 1e6, (idle > 0 ? idle : 0) / 1e6, s->fetch_us / 1e6,
                s->pop_us / 1e6, span_us > 0 ? s->busy_us / span_us : 0);
        bool first = true;
        for (size_t c = 0; c < ncodelets; c++) {
            if (s->per_codelet_us[c] <= 0)
                continue;
            fprintf(f, "%s\"%s\": %.9f", first ? "" : ", ", codelets[c], s->per_codelet_us[c] / 1e6);
            first = false;
        }
        fputs("}}", f);
    }
    fputs("\n  ],\n  \"layers\": [", f);
    for (size_t g = 0; g < ng; g++) {
        const struct group_sum *s = &gs[g];
        fprintf(f, "%s\n    {\"layer\": \"", g > 0 ? "," : "");
        json_escape(f, layer_name(run, s->layer));
        fprintf(f, "\", \"pass\": \"%s\", \"tasks\": %ld, \"busy_s\": %.9f, \"steps\": %ld, "
                   "\"first_to_last_mean_s\": %.9f, \"first_to_last_max_s\": %.9f}",
                s->pass, s->tasks, s->busy_us / 1e6, s->steps, s->steps > 0 ? s->span_sum_us / (double)s->steps / 1e6 : 0,
                s->span_max_us / 1e6);
    }
    fputs("\n  ]", f);
    enum { MAX_LINK_SUMS = 64 };
    struct link_sum sums[MAX_LINK_SUMS];
    size_t nsums = link_sums(run, sums, MAX_LINK_SUMS);
    long long all_bytes = 0;
    for (size_t i = 0; i < run->ntransfers; i++)
        all_bytes += run->transfers[i].bytes;
    fprintf(f, ",\n  \"transfers\": {\"count\": %zu, \"bytes\": %lld, \"links\": [", run->ntransfers, all_bytes);
    for (size_t i = 0; i < nsums; i++) {
        fputs(i > 0 ? ", {\"src\": \"" : "{\"src\": \"", f);
        json_escape(f, run->node_names[sums[i].src]);
        fputs("\", \"dst\": \"", f);
        json_escape(f, run->node_names[sums[i].dst]);
        fprintf(f, "\", \"transfers\": %ld, \"bytes\": %lld, \"busy_s\": %.9f}", sums[i].transfers, sums[i].bytes,
                sums[i].busy_us / 1e6);
    }
    fputs("]}", f);
    if (run->fxt != NULL && run->fxt->present) {
        const struct dahlsim_trace_fxt *x = run->fxt;
        fprintf(f, ",\n  \"fxt\": {\"tasks\": %ld, \"matched\": %ld, \"missing\": %ld, \"worker_mismatches\": %ld, "
                   "\"offset_us\": %.3f, \"p99_diff_us\": %.3f, \"max_start_diff_us\": %.3f, \"max_end_diff_us\": %.3f, "
                   "\"paje_reordered\": %ld}",
                x->fxt_tasks, x->matched, x->missing, x->worker_mismatches, x->offset_us, x->p99_diff_us,
                x->max_start_diff_us, x->max_end_diff_us, x->paje_reordered);
    } else {
        fputs(",\n  \"fxt\": null", f);
    }
    fputs("\n}\n", f);
    ret = close_checked(f, path, err, err_size);
    if (ret != 0)
        goto out;

    f = open_in(dir, "summary.txt", path, sizeof(path), err, err_size);
    if (f == NULL) {
        ret = -errno;
        goto out;
    }
    fprintf(f, "%s\n", run->title);
    fprintf(f, "steps %ld to %ld: %zu tasks in %.3f ms (StarPU clock %.3f to %.3f ms); parallel efficiency %.1f %%\n\n",
            run->first_step + 1, run->last_step + 1, run->ntasks, span_us / 1e3, t0_us / 1e3, t1_us / 1e3,
            100 * efficiency);
    int wn = 10; /* the widest worker name ("CUDA 0.0 (Simgrid 14.4 GiB)") sets the first column */
    for (size_t w = 0; w < run->nworkers; w++)
        if ((int)strlen(run->workers[w].name) > wn)
            wn = (int)strlen(run->workers[w].name);
    fprintf(f, "%-*s %7s %10s %10s %10s %10s %6s  busiest codelet\n", wn, "worker", "tasks", "busy ms", "idle ms",
            "fetch ms", "sched ms", "util");
    for (size_t w = 0; w < run->nworkers; w++) {
        const struct worker_sum *s = &ws[w];
        double idle = span_us - s->busy_us - s->fetch_us - s->pop_us;
        size_t top = 0;
        for (size_t c = 1; c < ncodelets; c++)
            if (s->per_codelet_us[c] > s->per_codelet_us[top])
                top = c;
        fprintf(f, "%-*s %7ld %10.3f %10.3f %10.3f %10.3f %5.1f%%  %s\n", wn, run->workers[w].name, s->tasks,
                s->busy_us / 1e3, (idle > 0 ? idle : 0) / 1e3, s->fetch_us / 1e3, s->pop_us / 1e3,
                span_us > 0 ? 100 * s->busy_us / span_us : 0, ncodelets > 0 && s->tasks > 0 ? codelets[top] : "-");
    }
    fprintf(f, "\n%-28s %7s", "time per codelet (ms)", "total");
    /* "CUDA 0.0 " and "CPU 12" fit 9 columns; merged nodes' "node 3 CPU 1" gets its full width */
    int cw = 9, trunc = 9;
    for (size_t w = 0; w < run->nworkers; w++)
        if (strncmp(run->workers[w].name, "node ", 5) == 0 && (int)strlen(run->workers[w].name) > cw)
            cw = trunc = (int)strlen(run->workers[w].name);
    for (size_t w = 0; w < run->nworkers; w++)
        fprintf(f, " %*.*s", cw, trunc, run->workers[w].name);
    fputc('\n', f);
    for (size_t c = 0; c < ncodelets; c++) {
        double total = 0;
        for (size_t w = 0; w < run->nworkers; w++)
            total += ws[w].per_codelet_us[c];
        fprintf(f, "%-28s %7.2f", codelets[c], total / 1e3);
        for (size_t w = 0; w < run->nworkers; w++)
            fprintf(f, " %*.3f", cw, ws[w].per_codelet_us[c] / 1e3);
        fputc('\n', f);
    }
    fprintf(f, "\n%-12s %-9s %7s %10s %14s %14s\n", "layer", "pass", "tasks", "busy ms", "first-last ms",
            "(max, ms)");
    for (size_t g = 0; g < ng; g++) {
        const struct group_sum *s = &gs[g];
        fprintf(f, "%-12s %-9s %7ld %10.3f %14.4f %14.4f\n", layer_name(run, s->layer), s->pass, s->tasks,
                s->busy_us / 1e3, s->steps > 0 ? s->span_sum_us / (double)s->steps / 1e3 : 0, s->span_max_us / 1e3);
    }
    fputs("(first-last: per step, from the first task of the layer's pass starting to its last ending)\n", f);
    if (nsums > 0) {
        fprintf(f, "\ndata transfers (StarPU's FxT trace): %zu, %.3f MB\n", run->ntransfers, (double)all_bytes / 1e6);
        for (size_t i = 0; i < nsums; i++)
            fprintf(f, "  %s -> %s: %ld transfers, %.3f MB, link busy %.3f ms\n", run->node_names[sums[i].src],
                    run->node_names[sums[i].dst], sums[i].transfers, (double)sums[i].bytes / 1e6,
                    sums[i].busy_us / 1e3);
    }
    if (run->fxt != NULL && run->fxt->present)
        fprintf(f, "\nStarPU FxT trace: %ld tasks; %ld of dahl's %zu records matched by job id (%ld outside its "
                   "window), %ld on another worker; clock offset %.3f us, then 99 %% of start and end times within "
                   "%.3f us (max %.3f us start, %.3f us end)\n",
                run->fxt->fxt_tasks, run->fxt->matched, run->ntasks, run->fxt->missing, run->fxt->worker_mismatches,
                run->fxt->offset_us, run->fxt->p99_diff_us, run->fxt->max_start_diff_us, run->fxt->max_end_diff_us);
    ret = close_checked(f, path, err, err_size);
out:
    free(ws);
    free(gs);
    return ret;
}

int dahlsim_trace_write(struct dahlsim_trace_run *run, const char *dir, char *err, size_t err_size)
{
    if (run->ntasks > 0)
        qsort(run->tasks, run->ntasks, sizeof(*run->tasks), task_cmp);
    double t0_us = 0, t1_us = 0;
    for (size_t t = 0; t < run->ntasks; t++) {
        if (t == 0 || run->tasks[t].start_us < t0_us)
            t0_us = run->tasks[t].start_us;
        if (t == 0 || run->tasks[t].end_us > t1_us)
            t1_us = run->tasks[t].end_us;
    }
    /* Transfers in start order, only between nodes the run names (a Paje link needs both containers). */
    size_t kept = 0;
    for (size_t i = 0; i < run->ntransfers; i++) {
        const struct dahlsim_trace_transfer *x = &run->transfers[i];
        if (x->src >= 0 && (size_t)x->src < run->nnodes && x->dst >= 0 && (size_t)x->dst < run->nnodes)
            run->transfers[kept++] = *x;
    }
    run->ntransfers = kept;
    if (kept > 0) /* qsort's pointer must not be NULL, even for no element */
        qsort(run->transfers, run->ntransfers, sizeof(*run->transfers), transfer_cmp);
    const char *codelets[MAX_CODELETS];
    size_t ncodelets = codelet_list(run, codelets);
    int ret = write_paje(run, codelets, ncodelets, t0_us, t1_us, dir, err, err_size);
    if (ret == 0)
        ret = write_chrome(run, dir, err, err_size);
    if (ret == 0)
        ret = write_gantt(run, codelets, ncodelets, t0_us, t1_us, dir, err, err_size);
    if (ret == 0)
        ret = write_summary(run, codelets, ncodelets, t0_us, t1_us, dir, err, err_size);
    return ret;
}
