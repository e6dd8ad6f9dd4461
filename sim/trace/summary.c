/* The utilisation summary of one run (summary.json and summary.txt): per worker, its tasks, busy, idle,
 * input-wait and scheduler time and its time per codelet; per layer and pass, the first-to-last time of each
 * step; the bytes per bus link; parallel efficiency; how dahl's records compare with StarPU's FxT trace. The
 * figures are summed once (summary_sum), then written as JSON and as text tables. */
#include "dahlsim_trace_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct worker_sum {
    long tasks;
    double busy_us, fetch_us, pop_us;
    double per_codelet_us[DAHLSIM_TRACE_MAX_CODELETS];
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

static size_t codelet_index(const char *const *names, size_t n, const char *name)
{
    for (size_t k = 0; k < n; k++)
        if (names[k] == name || strcmp(names[k], name) == 0)
            return k;
    return n;
}

enum { MAX_LINK_SUMS = 64 };

/* Everything both files show, summed from the run's records. */
struct summary {
    double t0_us, t1_us, span_us;
    struct worker_sum *ws;         /* by worker id (nworkers + 1 entries) */
    struct group_sum *gs;          /* by (layer, pass), in group_cmp order */
    size_t ng;
    double busy_total;             /* over every known worker, microseconds */
    double efficiency;             /* busy_total / (span * workers) */
    struct link_sum sums[MAX_LINK_SUMS];
    size_t nsums;
    long long all_bytes;           /* over every transfer */
};

/* Per worker: tasks, busy, fetch and pop time, time per codelet. Returns the busy time over all workers. */
static double sum_workers(const struct dahlsim_trace_run *run, const char *const *codelets, size_t ncodelets,
                          struct worker_sum *ws)
{
    double busy_total = 0;
    for (size_t t = 0; t < run->ntasks; t++) {
        const struct dahl_profile_task *x = &run->tasks[t];
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
    return busy_total;
}

/* Per (layer, pass), at most gcap of them: tasks, busy time and the first-to-last time of every step, in
 * group_cmp order. by_step: the run's tasks, sorted here by step. Returns the count. */
static size_t sum_groups(const struct dahlsim_trace_run *run, const struct dahl_profile_task **by_step,
                         struct group_sum *gs, size_t gcap)
{
    size_t ng = 0;
    qsort(by_step, run->ntasks, sizeof(*by_step), step_cmp);
    for (size_t t = 0; t < run->ntasks; t++) {
        const struct dahl_profile_task *x = by_step[t];
        const char *pass = dahlsim_trace_pass_of(x->codelet);
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
    return ng;
}

/* Fills sum (its ws and gs malloc'ed: summary_fini frees them). Returns 0 or -ENOMEM. */
static int summary_sum(const struct dahlsim_trace_run *run, const char *const *codelets, size_t ncodelets,
                       double t0_us, double t1_us, struct summary *sum)
{
    *sum = (struct summary){.t0_us = t0_us, .t1_us = t1_us};
    sum->ws = calloc(run->nworkers + 1, sizeof(*sum->ws));
    size_t gcap = 4 * (size_t)(run->nlayers + 2) + 8;
    sum->gs = calloc(gcap, sizeof(*sum->gs));
    const struct dahl_profile_task **by_step = malloc((run->ntasks + 1) * sizeof(*by_step));
    if (sum->ws == NULL || sum->gs == NULL || by_step == NULL) {
        free(by_step);
        return -ENOMEM;
    }
    for (size_t t = 0; t < run->ntasks; t++)
        by_step[t] = &run->tasks[t];
    sum->busy_total = sum_workers(run, codelets, ncodelets, sum->ws);
    sum->ng = sum_groups(run, by_step, sum->gs, gcap);
    free(by_step);
    sum->span_us = t1_us > t0_us ? t1_us - t0_us : 0;
    sum->efficiency = sum->span_us > 0 && run->nworkers > 0
                          ? sum->busy_total / (sum->span_us * (double)run->nworkers)
                          : 0;
    sum->nsums = link_sums(run, sum->sums, MAX_LINK_SUMS);
    for (size_t i = 0; i < run->ntransfers; i++)
        sum->all_bytes += run->transfers[i].bytes;
    return 0;
}

static void summary_fini(struct summary *sum)
{
    free(sum->ws);
    free(sum->gs);
}

/* summary.json into f. */
static void summary_json(FILE *f, const struct dahlsim_trace_run *run, const char *const *codelets, size_t ncodelets,
                         const struct summary *sum)
{
    fputs("{\n  \"title\": \"", f);
    dahlsim_trace_json_escape(f, run->title);
    fprintf(f, "\",\n  \"steps\": {\"first\": %ld, \"last\": %ld},\n", run->first_step + 1, run->last_step + 1);
    fprintf(f, "  \"tasks\": %zu,\n  \"start_s\": %.9f,\n  \"end_s\": %.9f,\n  \"span_s\": %.9f,\n", run->ntasks,
            sum->t0_us / 1e6, sum->t1_us / 1e6, sum->span_us / 1e6);
    fprintf(f, "  \"busy_s\": %.9f,\n  \"parallel_efficiency\": %.6f,\n", sum->busy_total / 1e6, sum->efficiency);
    fputs("  \"workers\": [", f);
    for (size_t w = 0; w < run->nworkers; w++) {
        const struct worker_sum *s = &sum->ws[w];
        double idle = sum->span_us - s->busy_us - s->fetch_us - s->pop_us;
        fprintf(f, "%s\n    {\"id\": %zu, \"name\": \"", w > 0 ? "," : "", w);
        dahlsim_trace_json_escape(f, run->workers[w].name);
        fprintf(f, "\", \"arch\": \"%s\", \"tasks\": %ld, \"busy_s\": %.9f, \"idle_s\": %.9f, \"transfer_wait_s\": %.9f, "
                   "\"scheduler_s\": %.9f, \"utilisation\": %.6f, \"per_codelet_s\": {",
                run->workers[w].arch, s->tasks, s->busy_us / 1e6, (idle > 0 ? idle : 0) / 1e6, s->fetch_us / 1e6,
                s->pop_us / 1e6, sum->span_us > 0 ? s->busy_us / sum->span_us : 0);
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
    for (size_t g = 0; g < sum->ng; g++) {
        const struct group_sum *s = &sum->gs[g];
        fprintf(f, "%s\n    {\"layer\": \"", g > 0 ? "," : "");
        dahlsim_trace_json_escape(f, dahlsim_trace_layer_name(run, s->layer));
        fprintf(f, "\", \"pass\": \"%s\", \"tasks\": %ld, \"busy_s\": %.9f, \"steps\": %ld, "
                   "\"first_to_last_mean_s\": %.9f, \"first_to_last_max_s\": %.9f}",
                s->pass, s->tasks, s->busy_us / 1e6, s->steps,
                s->steps > 0 ? s->span_sum_us / (double)s->steps / 1e6 : 0, s->span_max_us / 1e6);
    }
    fputs("\n  ]", f);
    fprintf(f, ",\n  \"transfers\": {\"count\": %zu, \"bytes\": %lld, \"links\": [", run->ntransfers, sum->all_bytes);
    for (size_t i = 0; i < sum->nsums; i++) {
        fputs(i > 0 ? ", {\"src\": \"" : "{\"src\": \"", f);
        dahlsim_trace_json_escape(f, run->node_names[sum->sums[i].src]);
        fputs("\", \"dst\": \"", f);
        dahlsim_trace_json_escape(f, run->node_names[sum->sums[i].dst]);
        fprintf(f, "\", \"transfers\": %ld, \"bytes\": %lld, \"busy_s\": %.9f}", sum->sums[i].transfers,
                sum->sums[i].bytes, sum->sums[i].busy_us / 1e6);
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
}

/* summary.txt into f: the same as text tables. */
static void summary_txt(FILE *f, const struct dahlsim_trace_run *run, const char *const *codelets, size_t ncodelets,
                        const struct summary *sum)
{
    fprintf(f, "%s\n", run->title);
    fprintf(f, "steps %ld to %ld: %zu tasks in %.3f ms (StarPU clock %.3f to %.3f ms); parallel efficiency %.1f %%\n\n",
            run->first_step + 1, run->last_step + 1, run->ntasks, sum->span_us / 1e3, sum->t0_us / 1e3,
            sum->t1_us / 1e3, 100 * sum->efficiency);
    int wn = 10; /* the widest worker name ("CUDA 0.0 (Simgrid 14.4 GiB)") sets the first column */
    for (size_t w = 0; w < run->nworkers; w++)
        if ((int)strlen(run->workers[w].name) > wn)
            wn = (int)strlen(run->workers[w].name);
    fprintf(f, "%-*s %7s %10s %10s %10s %10s %6s  busiest codelet\n", wn, "worker", "tasks", "busy ms", "idle ms",
            "fetch ms", "sched ms", "util");
    for (size_t w = 0; w < run->nworkers; w++) {
        const struct worker_sum *s = &sum->ws[w];
        double idle = sum->span_us - s->busy_us - s->fetch_us - s->pop_us;
        size_t top = 0;
        for (size_t c = 1; c < ncodelets; c++)
            if (s->per_codelet_us[c] > s->per_codelet_us[top])
                top = c;
        fprintf(f, "%-*s %7ld %10.3f %10.3f %10.3f %10.3f %5.1f%%  %s\n", wn, run->workers[w].name, s->tasks,
                s->busy_us / 1e3, (idle > 0 ? idle : 0) / 1e3, s->fetch_us / 1e3, s->pop_us / 1e3,
                sum->span_us > 0 ? 100 * s->busy_us / sum->span_us : 0,
                ncodelets > 0 && s->tasks > 0 ? codelets[top] : "-");
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
            total += sum->ws[w].per_codelet_us[c];
        fprintf(f, "%-28s %7.2f", codelets[c], total / 1e3);
        for (size_t w = 0; w < run->nworkers; w++)
            fprintf(f, " %*.3f", cw, sum->ws[w].per_codelet_us[c] / 1e3);
        fputc('\n', f);
    }
    fprintf(f, "\n%-12s %-9s %7s %10s %14s %14s\n", "layer", "pass", "tasks", "busy ms", "first-last ms",
            "(max, ms)");
    for (size_t g = 0; g < sum->ng; g++) {
        const struct group_sum *s = &sum->gs[g];
        fprintf(f, "%-12s %-9s %7ld %10.3f %14.4f %14.4f\n", dahlsim_trace_layer_name(run, s->layer), s->pass,
                s->tasks, s->busy_us / 1e3, s->steps > 0 ? s->span_sum_us / (double)s->steps / 1e3 : 0,
                s->span_max_us / 1e3);
    }
    fputs("(first-last: per step, from the first task of the layer's pass starting to its last ending)\n", f);
    if (sum->nsums > 0) {
        fprintf(f, "\ndata transfers (StarPU's FxT trace): %zu, %.3f MB\n", run->ntransfers,
                (double)sum->all_bytes / 1e6);
        for (size_t i = 0; i < sum->nsums; i++)
            fprintf(f, "  %s -> %s: %ld transfers, %.3f MB, link busy %.3f ms\n", run->node_names[sum->sums[i].src],
                    run->node_names[sum->sums[i].dst], sum->sums[i].transfers, (double)sum->sums[i].bytes / 1e6,
                    sum->sums[i].busy_us / 1e3);
    }
    if (run->fxt != NULL && run->fxt->present)
        fprintf(f, "\nStarPU FxT trace: %ld tasks; %ld of dahl's %zu records matched by job id (%ld outside its "
                   "window), %ld on another worker; clock offset %.3f us, then 99 %% of start and end times within "
                   "%.3f us (max %.3f us start, %.3f us end)\n",
                run->fxt->fxt_tasks, run->fxt->matched, run->ntasks, run->fxt->missing, run->fxt->worker_mismatches,
                run->fxt->offset_us, run->fxt->p99_diff_us, run->fxt->max_start_diff_us, run->fxt->max_end_diff_us);
}

int dahlsim_trace_summary_write(const struct dahlsim_trace_run *run, const char *const *codelets, size_t ncodelets,
                                double t0_us, double t1_us, const char *dir, char *err, size_t err_size)
{
    static const struct {
        const char *name;
        void (*write)(FILE *f, const struct dahlsim_trace_run *run, const char *const *codelets, size_t ncodelets,
                      const struct summary *sum);
    } files[] = {{"summary.json", summary_json}, {"summary.txt", summary_txt}};
    struct summary sum;
    int ret = summary_sum(run, codelets, ncodelets, t0_us, t1_us, &sum);
    if (ret != 0)
        snprintf(err, err_size, "%s/summary.json: out of memory", dir);
    for (size_t i = 0; ret == 0 && i < sizeof(files) / sizeof(files[0]); i++) {
        char path[PATH_MAX + 32];
        FILE *f = dahlsim_trace_open_in(dir, files[i].name, path, sizeof(path), err, err_size);
        if (f == NULL) {
            ret = -errno;
        } else {
            files[i].write(f, run, codelets, ncodelets, &sum);
            ret = dahlsim_trace_close_checked(f, path, err, err_size);
        }
    }
    summary_fini(&sum);
    return ret;
}
