/* Multi-node traces: every rank saves its node's records (records.tsv: title, steps, workers, layer names and
 * tasks, times exact) next to its own trace, and the front end reads every node's file back and writes one
 * trace of them all (dahlsim_trace_write): the file's one save/load pair lives here. */
#include "dahlsim_trace_internal.h"

#include "dahl_array.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define MERGE_MAX_LAYERS 256

int dahlsim_trace_records_save(const struct dahlsim_trace_run *run, const char *dir, char *err, size_t err_size)
{
    char path[PATH_MAX + 32];
    FILE *f = dahlsim_trace_open_in(dir, "records.tsv", path, sizeof(path), err, err_size);
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
    return dahlsim_trace_close_checked(f, path, err, err_size);
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
    char **grown = dahl_array_grow(in->s, &in->cap, in->n + 1, sizeof(*grown));
    if (grown == NULL)
        return NULL;
    in->s = grown;
    char *copy = strdup(text);
    if (copy != NULL)
        in->s[in->n++] = copy;
    return copy;
}

/* The merge so far: every node's workers (named "node H NAME") and tasks (worker ids shifted past the nodes
 * before), node by node. */
struct merge {
    struct interned names;
    struct dahl_worker_stats *workers;
    int *host;                              /* the node of each worker */
    size_t nworkers, wcap, hcap;
    struct dahl_profile_task *tasks;
    size_t ntasks, tcap;
    const char *layers[MERGE_MAX_LAYERS];   /* into names; every node trains the same network */
    int nlayers;                            /* from the first node's records; -1 before */
    long first, last;                       /* the traced steps */
    char title[600];
};

/* A worker line of node h: rest is "ARCH\tNAME" (split in place). Returns 0 or -ENOMEM. */
static int merge_worker(struct merge *m, int h, char *rest)
{
    char *name = strchr(rest, '\t');
    if (name == NULL)
        return 0;
    *name++ = '\0';
    struct dahl_worker_stats *gw = dahl_array_grow(m->workers, &m->wcap, m->nworkers + 1, sizeof(*gw));
    if (gw == NULL)
        return -ENOMEM;
    m->workers = gw;
    int *gh = dahl_array_grow(m->host, &m->hcap, m->nworkers + 1, sizeof(*gh));
    if (gh == NULL)
        return -ENOMEM;
    m->host = gh;
    struct dahl_worker_stats *w = &m->workers[m->nworkers];
    *w = (struct dahl_worker_stats){.id = (int)m->nworkers};
    snprintf(w->name, sizeof(w->name), "node %d %s", h, name);
    w->arch = strcmp(rest, "cpu") == 0 ? "cpu" : strcmp(rest, "cuda") == 0 ? "cuda" : "other";
    m->host[m->nworkers++] = h;
    return 0;
}

/* A task line of path, its worker id shifted by base (the node's first worker). Returns 0, -ENOMEM, or
 * -EINVAL with a message naming path. */
static int merge_task(struct merge *m, size_t base, const char *rest, const char *path, char *err, size_t err_size)
{
    unsigned long long job;
    char codelet[128];
    struct dahl_profile_task x;
    if (sscanf(rest, "%llu\t%127s\t%d\t%d\t%ld\t%lf\t%lf\t%lf\t%lf", &job, codelet, &x.worker, &x.layer, &x.step,
               &x.start_us, &x.end_us, &x.fetch_us, &x.pop_us) != 9) {
        snprintf(err, err_size, "%s: a task line does not read: %s", path, rest);
        return -EINVAL;
    }
    x.job = job;
    x.codelet = intern(&m->names, codelet);
    if (x.codelet == NULL)
        return -ENOMEM;
    x.worker = x.worker >= 0 ? x.worker + (int)base : x.worker;
    struct dahl_profile_task *g = dahl_array_grow(m->tasks, &m->tcap, m->ntasks + 1, sizeof(*g));
    if (g == NULL)
        return -ENOMEM;
    m->tasks = g;
    m->tasks[m->ntasks++] = x;
    return 0;
}

/* Reads dir/node-h/records.tsv (of nodes) into m. Returns 0 or -errno with a message naming the file. */
static int merge_node(struct merge *m, const char *dir, int h, int nodes, char *err, size_t err_size)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof(path), "%s/node-%d/records.tsv", dir, h);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        int ret = -errno;
        snprintf(err, err_size, "%s: %s (every node's records are needed to merge the trace)", path,
                 strerror(errno));
        return ret;
    }
    size_t base = m->nworkers;
    int node_layers = 0;
    char line[4096];
    bool header = false;
    int ret = 0;
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
                snprintf(m->title, sizeof(m->title), "%d nodes: %s", nodes, rest);
        } else if (strcmp(line, "steps") == 0) {
            sscanf(rest, "%ld\t%ld", &m->first, &m->last);
        } else if (strcmp(line, "worker") == 0) {
            ret = merge_worker(m, h, rest);
        } else if (strcmp(line, "layer") == 0 && node_layers < MERGE_MAX_LAYERS) {
            const char *l = intern(&m->names, rest);
            if (l == NULL)
                ret = -ENOMEM;
            else
                m->layers[node_layers++] = l;
        } else if (strcmp(line, "task") == 0) {
            ret = merge_task(m, base, rest, path, err, err_size);
        }
    }
    fclose(f);
    if (ret == 0 && !header) {
        ret = -EINVAL;
        snprintf(err, err_size, "%s: expected a dahl-trace-records file, version 1", path);
    }
    if (ret == -ENOMEM)
        snprintf(err, err_size, "%s: out of memory", path);
    if (ret == 0 && m->nlayers < 0)
        m->nlayers = node_layers - 1;
    return ret;
}

int dahlsim_trace_merge_nodes(const char *dir, int nodes, char *err, size_t err_size)
{
    struct merge m = {.nlayers = -1, .first = -1, .last = -1};
    int ret = 0;
    for (int h = 0; h < nodes && ret == 0; h++)
        ret = merge_node(&m, dir, h, nodes, err, err_size);
    if (ret == 0) {
        struct dahlsim_trace_run run = {
            .title = m.title,
            .workers = m.workers,
            .nworkers = m.nworkers,
            .tasks = m.tasks,
            .ntasks = m.ntasks,
            .layer_names = m.nlayers >= 0 ? m.layers : NULL,
            .nlayers = m.nlayers >= 0 ? m.nlayers : 0,
            .first_step = m.first,
            .last_step = m.last,
            .worker_host = m.host,
            .nhosts = nodes,
        };
        ret = dahlsim_trace_write(&run, dir, err, err_size);
    }
    for (size_t i = 0; i < m.names.n; i++)
        free(m.names.s[i]);
    free(m.names.s);
    free(m.workers);
    free(m.host);
    free(m.tasks);
    return ret;
}
