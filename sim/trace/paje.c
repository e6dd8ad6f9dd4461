/* The Paje trace (dahl.paje) of one run: one container per worker holding its states (codelet, Idle,
 * Fetching input, Scheduling), one per memory node, one link per data transfer; times in milliseconds. Also
 * puts StarPU's own Paje file back in time order (dahlsim_trace_paje_sort), which pj_dump requires. */
#include "dahlsim_trace_internal.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- writing dahl.paje --------------------------------------------------------------------------------------- */

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

/* The workers' state changes, sorted (malloc'ed; *count of them). NULL when out of memory. */
static struct paje_event *paje_states(const struct dahlsim_trace_run *run, double t0_us, size_t *count)
{
    size_t nev = 4 * run->ntasks; /* at most Scheduling, Fetching, the task and Idle each */
    struct paje_event *ev = malloc((nev > 0 ? nev : 1) * sizeof(*ev));
    /* Per worker, in start order: Scheduling and Fetching input just before the task (StarPU measures their
     * durations), the codelet, then Idle. Clipped so a state never starts before the previous task ended. */
    double *last_end = ev != NULL ? calloc(run->nworkers + 1, sizeof(double)) : NULL;
    if (last_end == NULL) {
        free(ev);
        return NULL;
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
    *count = k;
    return ev;
}

/* The header, the types and entity values (one per codelet), and every container, opened at open_ms. */
static void paje_define(FILE *f, const struct dahlsim_trace_run *run, const char *const *codelets,
                        size_t ncodelets, double open_ms)
{
    fputs(paje_header, f);
    /* Merged multi-node runs: Machine > Node > Worker. */
    fputs(run->worker_host != NULL ? "0 M 0 \"Machine\"\n0 H M \"Node\"\n0 W H \"Worker\"\n"
                                   : "0 M 0 \"Machine\"\n0 W M \"Worker\"\n",
          f);
    fputs("1 S W \"Worker State\"\n0 N M \"Memory node\"\n6 L M N N \"Data transfer\"\n", f);
    fputs("2 Id S \"Idle\" ", f);
    paje_colour(f, DAHLSIM_TRACE_IDLE_COLOUR);
    fputs("\n2 Fe S \"Fetching input\" \"0.900 0.100 0.100\"\n2 Sc S \"Scheduling\" \"0.600 0.600 0.000\"\n", f);
    for (size_t c = 0; c < ncodelets; c++) {
        fprintf(f, "2 %s S \"%s\" ", codelets[c], codelets[c]);
        paje_colour(f, dahlsim_trace_codelet_colour(c));
        fputc('\n', f);
    }
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
}

/* Destroys every container at close_ms, the inner ones first. */
static void paje_close(FILE *f, const struct dahlsim_trace_run *run, double close_ms)
{
    for (size_t w = 0; w < run->nworkers; w++)
        fprintf(f, "4 %.9f W w%zu\n", close_ms, w);
    for (size_t m = 0; m < run->nnodes; m++)
        fprintf(f, "4 %.9f N n%zu\n", close_ms, m);
    for (int h = 0; run->worker_host != NULL && h < run->nhosts; h++)
        fprintf(f, "4 %.9f H h%d\n", close_ms, h);
    fprintf(f, "4 %.9f M m\n", close_ms);
}

int dahlsim_trace_paje_write(const struct dahlsim_trace_run *run, const char *const *codelets, size_t ncodelets,
                             double t0_us, double t1_us, const char *dir, char *err, size_t err_size)
{
    char path[PATH_MAX + 32];
    size_t k = 0;
    struct paje_event *ev = paje_states(run, t0_us, &k);
    /* Links: starts in the transfers' (start) order, ends in end order; the file is in time order overall. */
    struct link_end *ends = ev != NULL ? malloc((run->ntransfers > 0 ? run->ntransfers : 1) * sizeof(*ends)) : NULL;
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

    FILE *f = dahlsim_trace_open_in(dir, "dahl.paje", path, sizeof(path), err, err_size);
    if (f == NULL) {
        free(ev);
        free(ends);
        return -errno;
    }
    paje_define(f, run, codelets, ncodelets, open_us / 1e3);
    double t0_ms = t0_us / 1e3;
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
    paje_close(f, run, close_us / 1e3);
    free(ev);
    free(ends);
    return dahlsim_trace_close_checked(f, path, err, err_size);
}

/* ---- putting a Paje file in time order ----------------------------------------------------------------------- */

struct paje_line {
    const char *text; /* into the file's buffer, NUL-terminated (the newline replaced) */
    double t;         /* its time; -INFINITY for lines without one (the header and the definitions) */
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
    double max_t = -INFINITY;
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
        }
        /* Lines without a time (the header, and the type and value definitions StarPU writes when it first
         * meets a codelet) go first, in their order: a definition must stay ahead of every event that uses
         * it, including events that sorting moves earlier than where it was written. */
        double line_t = -INFINITY;
        int id;
        double t;
        if (p[0] != '%' && sscanf(p, "%d %lf", &id, &t) == 2 && id >= 0 && id < MAX_IDS && timed[id]) {
            if (t < max_t)
                (*moved)++; /* earlier than an event before it */
            max_t = fmax(max_t, t);
            line_t = t;
        }
        lines[n] = (struct paje_line){.text = p, .t = line_t, .index = n};
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
            ret = dahlsim_trace_close_checked(o, tmp, err, err_size);
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
