/* Traces and the utilisation summary of one run, from dahl's task records: see dahlsim_trace.h. Times in the
 * files are on StarPU's clock (simulated time in simulated runs): Paje in milliseconds, Chrome in microseconds,
 * the Gantt chart in milliseconds. Everything is sorted before it is written, so the same records give the
 * same bytes. This file sorts the records and calls each format's writer; it also parses the trace window and
 * renders the Gantt chart with gnuplot. */
#include "dahlsim_trace_internal.h"

#include "dahlsim_fs.h"
#include "dahlsim_spawn.h"
#include "dahlsim_util.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
        if (k == n && n < DAHLSIM_TRACE_MAX_CODELETS)
            names[n++] = run->tasks[t].codelet;
    }
    qsort(names, n, sizeof(*names), str_cmp);
    return n;
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
        qsort(run->transfers, run->ntransfers, sizeof(*run->transfers), dahlsim_trace_transfer_cmp);
    const char *codelets[DAHLSIM_TRACE_MAX_CODELETS];
    size_t ncodelets = codelet_list(run, codelets);
    int ret = dahlsim_trace_paje_write(run, codelets, ncodelets, t0_us, t1_us, dir, err, err_size);
    if (ret == 0)
        ret = dahlsim_trace_chrome_write(run, dir, err, err_size);
    if (ret == 0)
        ret = dahlsim_trace_gantt_write(run, codelets, ncodelets, t0_us, t1_us, dir, err, err_size);
    if (ret == 0)
        ret = dahlsim_trace_summary_write(run, codelets, ncodelets, t0_us, t1_us, dir, err, err_size);
    return ret;
}

int dahlsim_trace_render(const char *dir, char *err, size_t err_size)
{
    char gnuplot[PATH_MAX];
    if (!dahlsim_find_on_path("gnuplot", gnuplot, sizeof(gnuplot))) {
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
