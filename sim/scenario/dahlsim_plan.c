/* `dahlsim plan`: the partition search and its predictions; see dahlsim_plan.h. */
#include "dahlsim_plan.h"

#include "dahlsim_dag.h"
#include "dahlsim_grain.h"
#include "dahlsim_fs.h"
#include "dahlsim_util.h"

#include "dahl_netdesc.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PARTS DAHLSIM_MAX_NODE_GROUPS

/* One group's predictions over every share s in [0, batch]. */
struct table {
    const struct dahlsim_node_group *g;
    double *t;           /* t[s]: the step time of one node training s samples, made non-decreasing in s */
    double *dyn_j;       /* dyn_j[s]: its workers' busy seconds times their (full - idle) watts, per step */
    double idle_w;       /* every host of the node idle; < 0: the machine has no power figures */
};

/* A candidate while searching: parts of groups (a group may appear twice, its nodes one sample apart). */
struct part {
    int g;       /* the group */
    long count, share;
};

struct cand {
    int nparts;
    struct part parts[PARTS];
    long nodes;
    double step_s, compute_s, allreduce_s, energy_j;
};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

const char *dahlsim_plan_objective_name(enum dahlsim_plan_objective o)
{
    return o == DAHLSIM_PLAN_TIME ? "time" : "energy";
}

/* The watts of host id in a platform's text ("idle:full" of its wattage_per_state); false when absent. */
static bool host_watts(const char *xml, const char *id, double *idle_w, double *full_w)
{
    char key[64];
    snprintf(key, sizeof(key), "<host id=\"%s\"", id);
    const char *h = strstr(xml, key);
    if (h == NULL)
        return false;
    const char *end = strstr(h, "</host>"), *p = strstr(h, "wattage_per_state\" value=\"");
    if (p == NULL || end == NULL || p > end)
        return false;
    return sscanf(p + strlen("wattage_per_state\" value=\""), "%lf:%lf", idle_w, full_w) == 2;
}

/* The machine's idle watts (all its CPU and GPU hosts) and the extra watts of one busy CPU and GPU; the idle
 * watts are < 0 when its platform has no power figures. */
static void machine_watts(const struct dahlsim_node_group *g, double *idle_w, double *cpu_dyn_w, double *gpu_dyn_w)
{
    char path[PATH_MAX + 128];
    snprintf(path, sizeof(path), "%s/sampling/bus/%s.platform.v4.xml", g->machine_dir, g->machine);
    char *xml = dahlsim_read_text(path, SIZE_MAX);
    double ci, cf, gi = 0, gf = 0;
    *idle_w = -1;
    *cpu_dyn_w = *gpu_dyn_w = 0;
    if (xml != NULL && host_watts(xml, "CPU0", &ci, &cf) && (g->gpus == 0 || host_watts(xml, "CUDA0", &gi, &gf))) {
        *idle_w = (double)g->cpus * ci + (double)g->gpus * gi;
        *cpu_dyn_w = cf - ci;
        *gpu_dyn_w = gf - gi;
    }
    free(xml);
}

/* The group's machine as an experiment of x's network (what the lab's prediction reads). */
static void group_experiment(const struct dahlsim_experiment *x, const struct dahlsim_node_group *g,
                             struct dahlsim_experiment *out)
{
    *out = *x;
    snprintf(out->machine, sizeof(out->machine), "%s", g->machine);
    snprintf(out->machine_dir, sizeof(out->machine_dir), "%s", g->machine_dir);
    out->cpus = g->cpus;
    out->gpus = g->gpus;
    out->submit_us_per_task = g->submit_us_per_task;
    out->input_copy_bytes_per_s = g->input_copy_bytes_per_s;
    out->sched_push_us = g->sched_push_us;
    out->worker_us = g->worker_us;
}

static int table_fill(const struct dahlsim_experiment *x, const struct dahlsim_node_group *g, struct table *tb,
                      char *err, size_t err_size)
{
    long batch = x->batch;
    tb->g = g;
    tb->t = calloc((size_t)batch + 1, sizeof(double));
    tb->dyn_j = calloc((size_t)batch + 1, sizeof(double));
    struct dahlsim_experiment *xg = malloc(sizeof(*xg));
    if (tb->t == NULL || tb->dyn_j == NULL || xg == NULL) {
        free(xg);
        snprintf(err, err_size, "out of memory");
        return -ENOMEM;
    }
    group_experiment(x, g, xg);
    double cpu_w, gpu_w;
    machine_watts(g, &tb->idle_w, &cpu_w, &gpu_w);
    int ret = 0;
    for (long s = 1; ret == 0 && s <= batch; s++) {
        long grain = x->grain < 0 || x->grain > s ? s : x->grain;
        double busy[2];
        ret = dahlsim_grain_step_predict(xg, s, grain, &tb->t[s], busy, err, err_size);
        tb->dyn_j[s] = busy[0] * cpu_w + busy[1] * gpu_w;
        if (tb->t[s] < tb->t[s - 1]) /* more samples never finish sooner: a node may idle */
            tb->t[s] = tb->t[s - 1];
    }
    free(xg);
    return ret;
}

static double allreduce_s(const struct dahlsim_experiment *x, long nodes, double grad_bytes)
{
    int levels = 0;
    while ((1L << levels) < nodes)
        levels++;
    return 2.0 * levels * (x->network_latency_s + grad_bytes * 8.0 / x->network_bps);
}

/* Predicts c from its parts; false when it uses no node. */
static bool predict(const struct dahlsim_experiment *x, const struct table *tables, double grad_bytes,
                    struct cand *c)
{
    c->nodes = 0;
    c->compute_s = 0;
    bool watts = true;
    double dyn = 0, idle = 0;
    for (int i = 0; i < c->nparts; i++) {
        const struct table *tb = &tables[c->parts[i].g];
        long s = c->parts[i].share, n = c->parts[i].count;
        c->nodes += n;
        if (tb->t[s] > c->compute_s)
            c->compute_s = tb->t[s];
        watts &= tb->idle_w >= 0;
        idle += (double)n * tb->idle_w;
        dyn += (double)n * tb->dyn_j[s];
    }
    c->allreduce_s = allreduce_s(x, c->nodes, grad_bytes);
    c->step_s = c->compute_s + c->allreduce_s;
    c->energy_j = watts ? idle * c->step_s + dyn : -1;
    return c->nodes > 0;
}

/* Adds total samples to group g's count nodes as evenly as one sample apart allows: one part, or two. */
static bool add_parts(struct cand *c, int g, long count, long total)
{
    long q = total / count, extra = total % count;
    if (extra > 0) {
        if (c->nparts == PARTS)
            return false;
        c->parts[c->nparts++] = (struct part){g, extra, q + 1};
    }
    if (q > 0) {
        if (c->nparts == PARTS)
            return false;
        c->parts[c->nparts++] = (struct part){g, count - extra, q};
    }
    return true;
}

static double score(const struct dahlsim_plan_conf *conf, const struct cand *c)
{
    if (conf->objective == DAHLSIM_PLAN_TIME)
        return c->step_s;
    if (c->energy_j < 0 || (conf->time_bound_s > 0 && c->step_s > conf->time_bound_s))
        return INFINITY;
    return c->energy_j;
}

static bool same_parts(const struct cand *a, const struct cand *b)
{
    if (a->nparts != b->nparts)
        return false;
    for (int i = 0; i < a->nparts; i++)
        if (a->parts[i].g != b->parts[i].g || a->parts[i].count != b->parts[i].count ||
            a->parts[i].share != b->parts[i].share)
            return false;
    return true;
}

/* Keeps the conf->top best in best[] (sorted; *n of them), without duplicates. */
static void keep(const struct dahlsim_plan_conf *conf, struct cand *best, int *n, const struct cand *c)
{
    double sc = score(conf, c);
    if (!isfinite(sc))
        return;
    for (int i = 0; i < *n; i++)
        if (same_parts(&best[i], c))
            return;
    int at = *n;
    while (at > 0 && (score(conf, &best[at - 1]) > sc ||
                      (score(conf, &best[at - 1]) == sc && best[at - 1].nodes > c->nodes)))
        at--;
    if (at >= conf->top)
        return;
    int last = *n < conf->top ? *n : conf->top - 1;
    memmove(&best[at + 1], &best[at], (size_t)(last - at) * sizeof(*best));
    best[at] = *c;
    if (*n < conf->top)
        (*n)++;
}

/* Every subset of the groups, every step-time target: the shares that meet it, filled by least energy (or,
 * without power figures, least time) per sample. */
static size_t search(const struct dahlsim_experiment *x, const struct dahlsim_plan_conf *conf,
                     const struct table *tables, double grad_bytes, struct cand *best, int *nbest)
{
    int G = (int)x->ngroups;
    long B = x->batch;
    size_t searched = 0;
    double *targets = malloc((size_t)G * (size_t)B * sizeof(double));
    if (targets == NULL)
        return 0;
    for (unsigned mask = 1; mask < (1u << G); mask++) {
        size_t nt = 0;
        for (int g = 0; g < G; g++)
            if (mask & (1u << g))
                for (long s = 1; s <= B; s++)
                    targets[nt++] = tables[g].t[s];
        qsort(targets, nt, sizeof(double), cmp_double);
        for (size_t k = 0; k < nt; k++) {
            if (k > 0 && targets[k] == targets[k - 1])
                continue;
            double tau = targets[k];
            long cap[PARTS] = {0}, room = 0;
            int order[PARTS], no = 0;
            for (int g = 0; g < G; g++) {
                if (!(mask & (1u << g)))
                    continue;
                while (cap[g] < B && tables[g].t[cap[g] + 1] <= tau)
                    cap[g]++;
                room += cap[g] * x->groups[g].count;
                order[no++] = g;
            }
            if (room < B)
                continue;
            /* least energy per sample at the cap first (insertion sort: at most 8) */
            for (int i = 1; i < no; i++)
                for (int j = i; j > 0; j--) {
                    const struct table *a = &tables[order[j - 1]], *b = &tables[order[j]];
                    double ea = (a->idle_w >= 0 ? a->dyn_j[cap[order[j - 1]]] + a->idle_w * tau : a->t[cap[order[j - 1]]]) /
                                (double)cap[order[j - 1]];
                    double eb = (b->idle_w >= 0 ? b->dyn_j[cap[order[j]]] + b->idle_w * tau : b->t[cap[order[j]]]) /
                                (double)cap[order[j]];
                    if (ea <= eb)
                        break;
                    int t = order[j];
                    order[j] = order[j - 1];
                    order[j - 1] = t;
                }
            struct cand c = {0};
            long left = B;
            bool ok = true;
            unsigned used = 0;
            for (int i = 0; i < no && left > 0 && ok; i++) {
                int g = order[i];
                long total = cap[g] * x->groups[g].count < left ? cap[g] * x->groups[g].count : left;
                if (total <= 0)
                    continue;
                ok = add_parts(&c, g, x->groups[g].count, total);
                left -= total;
                used |= 1u << g;
            }
            /* a group of the subset left with nothing, or split short of a node: another subset's candidate */
            long in_use = 0, in_mask = 0;
            for (int i = 0; i < c.nparts; i++)
                in_use += c.parts[i].count;
            for (int g = 0; g < G; g++)
                in_mask += (mask & (1u << g)) ? x->groups[g].count : 0;
            if (!ok || left != 0 || used != mask || in_use != in_mask || !predict(x, tables, grad_bytes, &c))
                continue;
            searched++;
            keep(conf, best, nbest, &c);
        }
    }
    free(targets);
    return searched;
}

/* The equal split: batch / nodes each, the first batch % nodes nodes one more. */
static bool equal_split(const struct dahlsim_experiment *x, struct cand *c)
{
    *c = (struct cand){0};
    long left = x->batch % x->nodes;
    for (int g = 0; g < (int)x->ngroups; g++) {
        long extra = x->groups[g].count < left ? x->groups[g].count : left;
        left -= extra;
        struct cand part = {0};
        if (!add_parts(&part, g, x->groups[g].count, x->groups[g].count * (x->batch / x->nodes) + extra))
            return false;
        for (int i = 0; i < part.nparts; i++) {
            if (c->nparts == PARTS)
                return false;
            c->parts[c->nparts++] = part.parts[i];
        }
    }
    return true;
}

static void to_candidate(const struct dahlsim_experiment *x, const struct cand *c, bool equal,
                         struct dahlsim_plan_candidate *out)
{
    *out = (struct dahlsim_plan_candidate){.ngroups = c->nparts, .nodes = c->nodes, .step_s = c->step_s,
                                           .compute_s = c->compute_s, .allreduce_s = c->allreduce_s,
                                           .energy_j = c->energy_j, .equal = equal};
    for (int i = 0; i < c->nparts; i++) {
        out->groups[i] = x->groups[c->parts[i].g];
        out->groups[i].count = c->parts[i].count;
        out->groups[i].share = c->parts[i].share;
    }
}

int dahlsim_plan_make(const struct dahlsim_experiment *x, const struct dahlsim_plan_conf *conf,
                      struct dahlsim_plan *plan, char *err, size_t err_size)
{
    *plan = (struct dahlsim_plan){0};
    if (x->ngroups < 1 || x->nodes < 1) {
        snprintf(err, err_size, "expected a scenario with \"node_groups\" (the cluster to partition)");
        return -EINVAL;
    }
    int h = 28, w = 28, c = 1;
    if (strncmp(x->dataset, "synthetic:", 10) == 0)
        sscanf(x->dataset, "synthetic:%dx%dx%d", &h, &w, &c);
    struct dahlsim_dag_export_conf dc = {.machine_dir = x->machine_dir, .machine = x->machine, .c = c, .h = h,
                                         .w = w, .model = x->model};
    struct dahl_network_desc desc;
    int ret = dahlsim_dag_export_desc(&dc, &desc, err, err_size);
    if (ret != 0)
        return ret;
    plan->grad_bytes = 4.0 * (double)dahl_network_desc_params(&desc);
    struct table tables[PARTS] = {{0}};
    struct cand *best = calloc((size_t)conf->top, sizeof(*best));
    ret = best == NULL ? -ENOMEM : 0;
    for (long g = 0; ret == 0 && g < x->ngroups; g++) {
        ret = table_fill(x, &x->groups[g], &tables[g], err, err_size);
        if (ret == 0 && tables[g].idle_w < 0 && conf->objective == DAHLSIM_PLAN_ENERGY) {
            snprintf(err, err_size, "machine %s has no power figures (its platform's hosts have no "
                     "wattage_per_state): expected them for --objective energy", x->groups[g].machine);
            ret = -EINVAL;
        }
    }
    int nbest = 0;
    if (ret == 0) {
        plan->searched = search(x, conf, tables, plan->grad_bytes, best, &nbest);
        if (nbest == 0) {
            if (conf->time_bound_s > 0)
                snprintf(err, err_size, "no partition meets the time bound of %g s per step", conf->time_bound_s);
            else
                snprintf(err, err_size, "no partition of the %ld samples fits %d node groups", x->batch, PARTS);
            ret = -EINVAL;
        }
    }
    struct cand eq;
    if (ret == 0) {
        bool has_equal = equal_split(x, &eq) && predict(x, tables, plan->grad_bytes, &eq);
        plan->best = calloc((size_t)nbest + 1, sizeof(*plan->best));
        if (plan->best == NULL) {
            ret = -ENOMEM;
        } else {
            for (int i = 0; i < nbest; i++)
                to_candidate(x, &best[i], false, &plan->best[plan->nbest++]);
            if (has_equal)
                to_candidate(x, &eq, true, &plan->best[plan->nbest++]);
        }
    }
    if (ret == -ENOMEM)
        snprintf(err, err_size, "out of memory");
    for (int g = 0; g < PARTS; g++) {
        free(tables[g].t);
        free(tables[g].dyn_j);
    }
    free(best);
    return ret;
}

void dahlsim_plan_fini(struct dahlsim_plan *plan)
{
    free(plan->best);
    *plan = (struct dahlsim_plan){0};
}
