/* dahl's records against StarPU's own FxT trace of the same run, as StarPU's converter writes it: tasks.rec
 * (the same tasks on the same workers at the same times, dahlsim_trace_compare_fxt) and the Paje file, the only
 * place StarPU 1.3.10 gives the time of each data transfer (dahlsim_trace_fxt_transfers). */
#include "dahlsim_trace_internal.h"

#include "dahl_array.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

/* The tasks of tasks_rec that ran (with a worker and times), in file order: *out malloc'ed, *count of them.
 * Returns 0, or -errno with a message naming the file in err. */
static int fxt_tasks_read(const char *tasks_rec, struct fxt_task **out, size_t *count, char *err, size_t err_size)
{
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
                struct fxt_task *grown = dahl_array_grow(ft, &cap, n + 1, sizeof(*ft));
                if (grown == NULL) {
                    ret = -ENOMEM;
                    snprintf(err, err_size, "%s: out of memory", tasks_rec);
                    break;
                }
                ft = grown;
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
    *out = ft;
    *count = n;
    return 0;
}

int dahlsim_trace_compare_fxt(const char *tasks_rec, const struct dahl_profile_task *tasks, size_t ntasks,
                              struct dahlsim_trace_fxt *out, char *err, size_t err_size)
{
    *out = (struct dahlsim_trace_fxt){0};
    struct fxt_task *ft = NULL;
    size_t n = 0;
    int ret = fxt_tasks_read(tasks_rec, &ft, &n, err, err_size);
    if (ret != 0)
        return ret;
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

/* Reads the link starts (half[0]) and ends (half[1]) of data copies from f, a Paje file, in file order: the
 * fields of PajeStartLink and PajeEndLink come from the file's own %EventDef blocks. half[] grow as needed
 * (the caller frees them, also on error). Returns 0, or -ENOMEM with a message naming paje_trace in err. */
static int link_halves_read(FILE *f, const char *paje_trace, struct link_half *half[2], size_t nhalf[2], char *err,
                            size_t err_size)
{
    enum { MAX_DEFS = 8 };
    struct link_def defs[MAX_DEFS];
    int ndefs = 0, field = 0;
    struct link_def *cur = NULL; /* the link event definition being read */
    size_t cap[2] = {0, 0};
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
        struct link_half *grown = dahl_array_grow(half[side], &cap[side], nhalf[side] + 1, sizeof(*grown));
        if (grown == NULL) {
            snprintf(err, err_size, "%s: out of memory", paje_trace);
            ret = -ENOMEM;
            break;
        }
        half[side] = grown;
        struct link_half *h = &half[side][nhalf[side]++];
        snprintf(h->key, sizeof(h->key), "%s", fl[d->key]);
        h->t_ms = strtod(fl[d->time], NULL);
        h->node = (int)node;
        h->bytes = strtoll(fl[d->value], NULL, 10);
        h->kind = kind;
    }
    return ret;
}

/* Pairs starts and ends by key into transfers (malloc'ed into *out, *n of them, sorted): on StarPU's
 * profiling clock, those that start within one of the windows. Sorts half[]. Returns 0 or -ENOMEM. */
static int link_halves_pair(struct link_half *half[2], const size_t nhalf[2], double offset_us,
                            const double *windows, size_t nwindows, struct dahlsim_trace_transfer **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (nhalf[0] == 0)
        return 0;
    struct dahlsim_trace_transfer *tr = malloc(nhalf[0] * sizeof(*tr));
    if (tr == NULL)
        return -ENOMEM;
    size_t k = 0;
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
        qsort(tr, k, sizeof(*tr), dahlsim_trace_transfer_cmp);
    *out = tr;
    *n = k;
    return 0;
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
    struct link_half *half[2] = {NULL, NULL}; /* [0] starts, [1] ends */
    size_t nhalf[2] = {0, 0};
    int ret = link_halves_read(f, paje_trace, half, nhalf, err, err_size);
    fclose(f);
    if (ret == 0) {
        ret = link_halves_pair(half, nhalf, offset_us, windows, nwindows, out, n);
        if (ret != 0)
            snprintf(err, err_size, "%s: out of memory", paje_trace);
    }
    free(half[0]);
    free(half[1]);
    return ret;
}
