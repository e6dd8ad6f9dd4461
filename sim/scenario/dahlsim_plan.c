/* `dahlsim plan`: the partition search and its predictions; see dahlsim_plan.h. */
#include "dahlsim_plan.h"
#include "dahlsim_plan_internal.h"

#include "dahlsim_dag.h"
#include "dahlsim_grain.h"
#include "dahlsim_run.h"
#include "dahlsim_scenario_nodes.h"
#include "dahlsim_fs.h"
#include "dahlsim_util.h"

#include "dahl_layer.h"
#include "dahl_perfnames.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PARTS DAHLSIM_MAX_NODE_GROUPS

/* A candidate while searching: parts of groups (a group may appear twice, its nodes one sample apart). */
struct part {
    int g;       /* the group */
    long count, share;
};

struct cand {
    int nparts;
    struct part parts[PARTS];
    int ncuts, cuts[PARTS]; /* a pipeline: part k is stage k, from cuts[k - 1] (the parts in stage order) */
    int variant[PARTS];  /* per group: 0 its machine, k its k-th "pstates" machine */
    long nodes;
    double step_s, compute_s, allreduce_s, energy_j;
};

const char *dahlsim_plan_objective_name(enum dahlsim_plan_objective o)
{
    return o == DAHLSIM_PLAN_TIME ? "time" : "energy";
}

/* One message of the given bytes between two nodes, as SimGrid 3.32's SMPI network model (smpirun's, which
 * multi-node runs use) times it on the scenario's links: latency and bandwidth scaled by the defaults of
 * smpi/lat-factor and smpi/bw-factor for the message's size (`--help-cfg` lists them). */
static double transfer_s(const struct dahlsim_experiment *x, double bytes)
{
    static const double above[] = {65472, 15424, 9376, 5776, 3484, 1426, 732, 257, 0};
    static const double bw[] = {0.940694, 0.697866, 0.58729, 1.08739, 0.77493, 0.608902, 0.341987, 0.338112, 0.812084};
    static const double lat[] = {11.6436, 3.48845, 2.59299, 2.18796, 1.88101, 1.61075, 1.9503, 1.95341, 2.01467};
    size_t k = 0;
    while (bytes < above[k])
        k++;
    return x->network_latency_s * lat[k] + bytes * 8.0 / (x->network_bps * bw[k]);
}

/* The step's end on the binomial tree of runtime/dahl_mpi.c, ranks in order with the times they have their
 * gradient, done[] (overwritten). Up: at level l, rank r (bit l clear) gets rank r + 2^l's partial sum, one
 * transfer after it is ready and after the transfers r received before (one link in). Down: a rank posts its
 * sends to all its children at once when it has the total; sharing its link, each gets it after as many
 * transfers as there are children. A transfer: the network's latency plus the bytes over the link's
 * bandwidth. */
static double tree_end(double *done, long nodes, double transfer_s)
{
    double *link = calloc((size_t)nodes, sizeof(double));
    if (link == NULL)
        return INFINITY;
    for (long step = 1; step < nodes; step <<= 1)
        for (long r = 0; r + step < nodes; r += 2 * step) {
            double from = done[r + step] > link[r] ? done[r + step] : link[r];
            link[r] = from + transfer_s;
            if (link[r] > done[r])
                done[r] = link[r];
        }
    free(link);
    long top = 1;
    while (top < nodes)
        top <<= 1;
    double end = done[0];
    for (long t = top >> 1; t >= 1; t >>= 1)
        for (long r = 0; r + t < nodes; r += 2 * t) {
            long children = 0; /* r's sends: at every level below its own (r's lowest set bit; all for 0) */
            for (long u = 1; u < (r == 0 ? top : (r & -r)); u <<= 1)
                children += r + u < nodes;
            done[r + t] = done[r] + (double)children * transfer_s;
            if (done[r + t] > end)
                end = done[r + t];
        }
    return end;
}

/* Where between its two bounds the dense tree ends (predict): fitted to StarPU-SimGrid on
 * scenarios/partition-1v100-4x2core.json (2026-11-28), where the mixed partitions' steps end 11-18 ms after
 * the slowest node's compute, against 0.3 ms for the first bound and 36 ms for the second. */
#define DENSE_WAIT 0.5

/* Predicts c from its parts, ranks part after part, the parts first put in the order of their nodes' compute
 * times, the shortest first: rank 0, the tree's root, gathers and sends the most, and a node with time to
 * spare does it soonest (a busy root's accumulations wait for its workers). False when it uses no node (or
 * memory runs out). */
static bool predict(const struct dahlsim_experiment *x, const struct table *tables, const double grad[2],
                    struct cand *c)
{
    for (int i = 1; i < c->nparts; i++)
        for (int j = i; j > 0 && tables[c->parts[j - 1].g].t[c->parts[j - 1].share] >
                                     tables[c->parts[j].g].t[c->parts[j].share]; j--) {
            struct part p = c->parts[j];
            c->parts[j] = c->parts[j - 1];
            c->parts[j - 1] = p;
        }
    c->nodes = 0;
    c->compute_s = 0;
    for (int i = 0; i < c->nparts; i++)
        c->nodes += c->parts[i].count;
    /* each rank's compute end, its dense gradients' readiness, and that readiness where it waits (below) */
    double *done = malloc(3 * (size_t)(c->nodes > 0 ? c->nodes : 1) * sizeof(double)), *dense = done + c->nodes;
    if (done == NULL || c->nodes == 0) {
        free(done);
        return false;
    }
    bool watts = true;
    double dyn = 0, idle = 0;
    long r = 0;
    for (int i = 0; i < c->nparts; i++) {
        const struct table *tb = &tables[c->parts[i].g];
        long s = c->parts[i].share, n = c->parts[i].count;
        for (long k = 0; k < n; k++, r++) {
            done[r] = tb->t[s];
            dense[r] = tb->frac[s] * tb->t[s];
        }
        if (tb->t[s] > c->compute_s)
            c->compute_s = tb->t[s];
        watts &= tb->idle_w >= 0;
        idle += (double)n * tb->idle_w;
        dyn += (double)n * tb->dyn_j[s];
    }
    /* The dense layers' gradients travel while the convolutions' backward passes run, theirs at the end.
     * Where the dense tree ends lies between two bounds (DENSE_WAIT): a rank with children in the tree (even,
     * with a right neighbour) sums what they send with an accumulate task, which its busy workers run after
     * some of the step's queued tasks, at best at once (the partial sum leaves with its own gradient), at
     * worst when its compute ends. A leaf sends its dense gradient as soon as it has it. */
    double late_s = transfer_s(x, grad[0]), early_s = transfer_s(x, grad[1]);
    c->step_s = c->compute_s;
    if (c->nodes > 1) {
        double *waits = dense + c->nodes;
        memcpy(waits, dense, (size_t)c->nodes * sizeof(double));
        for (long k = 0; k + 1 < c->nodes; k += 2)
            waits[k] = done[k];
        double at_once = tree_end(dense, c->nodes, early_s), at_end = tree_end(waits, c->nodes, early_s);
        double a = tree_end(done, c->nodes, late_s), b = at_once + DENSE_WAIT * (at_end - at_once);
        c->step_s = a > b ? a : b;
    }
    c->allreduce_s = c->step_s - c->compute_s;
    c->energy_j = watts ? idle * c->step_s + dyn : -1;
    free(done);
    return true;
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
    if (a->nparts != b->nparts || memcmp(a->variant, b->variant, sizeof(a->variant)) != 0 || a->ncuts != b->ncuts ||
        memcmp(a->cuts, b->cuts, sizeof(a->cuts)) != 0)
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
                     const struct table *all, const int *variant, const double grad[2], struct cand *best,
                     int *nbest)
{
    int G = (int)x->ngroups;
    long B = x->batch;
    size_t searched = 0;
    double *targets = malloc((size_t)G * (size_t)B * sizeof(double));
    if (targets == NULL)
        return 0;
    for (unsigned mask = 1; mask < (1u << G); mask++) {
        /* one group of one node: that node alone, its tables without the progression thread's turns */
        struct table view[PARTS];
        memcpy(view, all, (size_t)G * sizeof(*view));
        for (int g = 0; g < G; g++)
            if (mask == 1u << g && x->groups[g].count == 1 && view[g].alone_t != NULL) {
                view[g].t = view[g].alone_t;
                view[g].dyn_j = view[g].alone_dyn_j;
            }
        const struct table *tables = view;
        size_t nt = 0;
        for (int g = 0; g < G; g++)
            if (mask & (1u << g))
                for (long s = 1; s <= B; s++)
                    targets[nt++] = tables[g].t[s];
        qsort(targets, nt, sizeof(double), dahlsim_plan_cmp_double);
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
            memcpy(c.variant, variant, sizeof(c.variant));
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
            if (!ok || left != 0 || used != mask || in_use != in_mask || !predict(x, tables, grad, &c))
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

static void to_candidate(const struct dahlsim_node_group (*groups)[1 + DAHLSIM_MAX_PSTATES], const struct cand *c,
                         bool equal, struct dahlsim_plan_candidate *out)
{
    *out = (struct dahlsim_plan_candidate){.ngroups = c->nparts, .nodes = c->nodes, .step_s = c->step_s,
                                           .compute_s = c->compute_s, .allreduce_s = c->allreduce_s,
                                           .energy_j = c->energy_j, .equal = equal};
    out->ncuts = c->ncuts;
    out->replicas = c->ncuts > 0 ? c->parts[0].count : 0;
    for (int k = 0; k < c->ncuts; k++)
        out->cuts[k] = c->cuts[k];
    for (int i = 0; i < c->nparts; i++) {
        out->groups[i] = groups[c->parts[i].g][c->variant[c->parts[i].g]];
        out->groups[i].pstates[0] = '\0';
        out->groups[i].count = c->parts[i].count;
        out->groups[i].share = c->parts[i].share;
    }
}

/* A machine's share of a step's work by layer (frac[l], l = 0 .. nlayers, the last the loss): the perf models'
 * task times of one step of `share` samples on its fastest kind of worker, the SGD updates left out. */
static int layer_work(const struct dahlsim_experiment *xg, long share, double *frac, int nlayers, char *err,
                      size_t err_size)
{
    struct dahlsim_dag dag;
    long grain = xg->grain < 0 || xg->grain > share ? share : xg->grain;
    int ret = dahlsim_grain_emulate(xg, share, grain, 1, &dag, NULL, NULL, err, err_size);
    if (ret != 0)
        return ret;
    int arch = xg->gpus > 0 ? DAHL_ARCH_GPU : DAHL_ARCH_CPU;
    double total = 0;
    for (int l = 0; l <= nlayers; l++)
        frac[l] = 0;
    for (int t = 0; dag.task_layer != NULL && t < dag.ntasks; t++) {
        const char *name = dag.names[dag.type[t]];
        if (strstr(name, "sgd_update") != NULL || strstr(name, "dahl_zero") != NULL || dag.task_layer[t] < 0 ||
            dag.task_layer[t] > nlayers)
            continue;
        double cost = dahlsim_dag_task_cost(&dag, t, arch);
        if (cost <= 0)
            cost = dahlsim_dag_task_cost(&dag, t, DAHL_ARCH_CPU);
        frac[dag.task_layer[t]] += cost;
        total += cost;
    }
    for (int l = 0; l <= nlayers && total > 0; l++)
        frac[l] /= total;
    dahlsim_dag_fini(&dag);
    return 0;
}

/* Pipelines and hybrids (dahlsim_plan.h): with every group the same node count R, each order of the groups as
 * stages and each set of cuts giving every stage a layer with weights; each stage's R replicas train batch / R
 * samples in micro-batches of the grain. Predicted as GPipe's schedule: (micro-batches + stages - 1) times the
 * slowest stage's time per micro-batch (the stage's layers' share of its machine's one-node step time T_m,
 * from layer_work), plus the first micro-batch's messages along the pipeline and back, plus each stage's
 * allreduce among its replicas; energy as for data partitions, each stage's joules above idle scaled by its
 * layers' share. */
static size_t search_pipelines(const struct dahlsim_experiment *x, const struct dahlsim_plan_conf *conf,
                               struct table (*tables)[1 + DAHLSIM_MAX_PSTATES],
                               const struct dahlsim_node_group (*groups)[1 + DAHLSIM_MAX_PSTATES],
                               const struct dahl_network_desc *desc, const struct dahl_layer_shape *shapes,
                               struct cand *best, int *nbest, char *err, size_t err_size)
{
    int S = (int)x->ngroups, L = desc->nlayers;
    long R = x->groups[0].count;
    for (int g = 1; g < S; g++)
        if (x->groups[g].count != R)
            return 0;
    if (S < 2 || S > 4 || x->batch % R != 0 || dahl_network_desc_layer_major(desc)) /* batch norm: no stages */
        return 0;
    long B = x->batch / R, grain = x->grain < 1 || x->grain > B ? (x->grain == 0 ? 1 : B) : x->grain;
    long micro = (B + grain - 1) / grain;
    double work[PARTS][DAHL_NETWORK_MAX_LAYERS + 1];
    struct dahlsim_experiment *xg = malloc(sizeof(*xg));
    if (xg == NULL)
        return 0;
    for (int g = 0; g < S; g++) {
        dahlsim_plan_group_experiment(x, &groups[g][0], xg);
        if (layer_work(xg, B, work[g], L, err, err_size) != 0) {
            free(xg);
            return 0;
        }
    }
    free(xg);
    size_t searched = 0;
    int order[4] = {0, 1, 2, 3}, cuts[4];
    /* every order (permutations by swaps), every cut set (increasing) */
    int c[4] = {0};
    for (;;) {
        for (int k = 0; k < S - 1; k++)
            cuts[k] = k + 1;
        for (;;) {
            /* stage s covers [lo, hi) */
            double slowest = 0, msgs = 0, reduce = 0, energy = 0, idle = 0;
            bool ok = true, watts = true;
            for (int s = 0; s < S && ok; s++) {
                int lo = s == 0 ? 0 : cuts[s - 1], hi = s == S - 1 ? L : cuts[s];
                bool weights = false;
                double share = 0, grad_bytes = 0;
                for (int l = lo; l < hi; l++) {
                    weights |= dahl_layer_desc_has_params(&desc->layers[l]);
                    share += work[order[s]][l];
                    grad_bytes += 4.0 * (double)(shapes[l].nw + shapes[l].nb);
                }
                if (hi == L)
                    share += work[order[s]][L];
                ok = weights && (lo == 0 || dahl_network_desc_cut_ok(desc, lo)); /* no skip connection across */
                const struct table *tb = &tables[order[s]][0];
                double stage = tb->t[B] * share;
                if (stage / (double)micro > slowest)
                    slowest = stage / (double)micro;
                if (s + 1 < S) {
                    const struct dahl_layer_shape *cut = &shapes[hi - 1];
                    double bytes = 4.0 * cut->out_c * cut->out_h * cut->out_w * (double)(B < grain ? B : grain);
                    msgs += 2 * transfer_s(x, bytes);
                }
                if (R > 1) {
                    int levels = 0;
                    while ((1L << levels) < R)
                        levels++;
                    double t = 2.0 * levels * transfer_s(x, grad_bytes);
                    reduce = t > reduce ? t : reduce;
                }
                watts &= tb->idle_w >= 0;
                idle += (double)R * tb->idle_w;
                energy += (double)R * tb->dyn_j[B] * share;
            }
            if (ok) {
                struct cand cd = {.nparts = S, .ncuts = S - 1, .nodes = R * S};
                for (int s = 0; s < S; s++)
                    cd.parts[s] = (struct part){order[s], R, B};
                for (int k = 0; k < S - 1; k++)
                    cd.cuts[k] = cuts[k];
                cd.compute_s = (double)(micro + S - 1) * slowest;
                cd.allreduce_s = msgs + reduce;
                cd.step_s = cd.compute_s + cd.allreduce_s;
                cd.energy_j = watts ? idle * cd.step_s + energy : -1;
                keep(conf, best, nbest, &cd);
                searched++;
            }
            /* next cut set */
            int k = S - 2;
            while (k >= 0 && cuts[k] == L - (S - 1 - k))
                k--;
            if (k < 0)
                break;
            cuts[k]++;
            for (int j = k + 1; j < S - 1; j++)
                cuts[j] = cuts[j - 1] + 1;
        }
        /* next order (Heap's algorithm, iterative) */
        int i = 1;
        while (i < S && c[i] >= i)
            c[i++] = 0;
        if (i >= S)
            break;
        int j = i % 2 == 0 ? 0 : c[i];
        int t = order[j];
        order[j] = order[i];
        order[i] = t;
        c[i]++;
    }
    return searched;
}

/* A group's machines: out[0] the group itself, then one per name of its "pstates", resolved (directory,
 * workers, runtime costs) as the scenario resolves a machine. *n of them. Returns 0 or -EINVAL (err). */
static int group_variants(const struct dahlsim_experiment *x, const struct dahlsim_node_group *g,
                          struct dahlsim_node_group *out, int *n, char *err, size_t err_size)
{
    out[0] = *g;
    *n = 1;
    char names[sizeof(g->pstates)];
    snprintf(names, sizeof(names), "%s", g->pstates);
    struct dahlsim_experiment *xv = malloc(sizeof(*xv));
    cJSON *none = cJSON_CreateObject();
    int ret = xv == NULL || none == NULL ? -ENOMEM : 0;
    for (char *save = NULL, *name = strtok_r(names, ",", &save); ret == 0 && name != NULL && *n <= DAHLSIM_MAX_PSTATES;
         name = strtok_r(NULL, ",", &save)) {
        *xv = *x;
        out[*n] = *g;
        snprintf(out[*n].machine, sizeof(out[*n].machine), "%s", name);
        snprintf(xv->machine, sizeof(xv->machine), "%s", name);
        if (dahlsim_node_group_dir(x, &out[*n], xv->machine_dir, sizeof(xv->machine_dir)) != 0) {
            snprintf(err, err_size, "pstate machine %s: its directory is too long", name);
            ret = -EINVAL;
            break;
        }
        const struct dahlsim_where w = {.path = "plan", .point = ""};
        if (!dahlsim_scenario_machine_checks(&w, none, xv)) {
            snprintf(err, err_size, "node group of %s: pstate machine %s: see the error above", g->machine, name);
            ret = -EINVAL;
            break;
        }
        dahlsim_node_group_take_experiment(&out[*n], xv);
        (*n)++;
    }
    cJSON_Delete(none);
    free(xv);
    if (ret == -ENOMEM)
        snprintf(err, err_size, "out of memory");
    return ret;
}

int dahlsim_plan_make(const struct dahlsim_experiment *x, const struct dahlsim_plan_conf *conf,
                      struct dahlsim_plan *plan, char *err, size_t err_size)
{
    *plan = (struct dahlsim_plan){0};
    if (x->ngroups < 1 || x->nodes < 1) {
        snprintf(err, err_size, "expected a scenario with \"node_groups\" (the cluster to partition)");
        return -EINVAL;
    }
    struct dahl_network_desc desc;
    int ret = dahlsim_grain_network_desc(x, &desc, err, err_size);
    if (ret != 0)
        return ret;
    /* the gradient bytes of the convolutions (grad[0]) and of the dense layers (grad[1]) */
    struct dahl_layer_shape shapes[DAHL_NETWORK_MAX_LAYERS];
    ret = dahl_network_desc_shapes(&desc, shapes, err, err_size);
    if (ret != 0)
        return ret;
    double grad[2] = {0, 0};
    for (int l = 0; l < desc.nlayers; l++)
        grad[shapes[l].desc.kind == DAHL_LAYER_DENSE] += 4.0 * (double)(shapes[l].nw + shapes[l].nb);
    plan->grad_bytes = grad[0] + grad[1];
    /* Each group's machines: its own, then its "pstates" ones, resolved as the scenario's machines are. */
    struct dahlsim_node_group (*groups)[1 + DAHLSIM_MAX_PSTATES] = calloc(PARTS, sizeof(*groups));
    struct table (*tables)[1 + DAHLSIM_MAX_PSTATES] = calloc(PARTS, sizeof(*tables));
    int nvariants[PARTS] = {0};
    struct cand *best = calloc((size_t)conf->top, sizeof(*best));
    ret = best == NULL || groups == NULL || tables == NULL ? -ENOMEM : 0;
    for (long g = 0; ret == 0 && g < x->ngroups; g++)
        ret = group_variants(x, &x->groups[g], groups[g], &nvariants[g], err, err_size);
    for (long g = 0; ret == 0 && g < x->ngroups; g++)
        for (int v = 0; ret == 0 && v < nvariants[g]; v++) {
            ret = dahlsim_plan_table_fill(x, conf, &groups[g][v], &tables[g][v], err, err_size);
            if (ret == 0 && tables[g][v].idle_w < 0 && conf->objective == DAHLSIM_PLAN_ENERGY) {
                snprintf(err, err_size, "machine %s has no power figures (its platform's hosts have no "
                         "wattage_per_state): expected them for --objective energy", groups[g][v].machine);
                ret = -EINVAL;
            }
        }
    int nbest = 0;
    if (ret == 0) {
        /* every choice of one machine per group (the first of each: the scenario's own) */
        int variant[PARTS] = {0};
        for (;;) {
            struct table chosen[PARTS];
            for (long g = 0; g < x->ngroups; g++)
                chosen[g] = tables[g][variant[g]];
            plan->searched += search(x, conf, chosen, variant, grad, best, &nbest);
            long g = 0;
            while (g < x->ngroups && ++variant[g] == nvariants[g])
                variant[g++] = 0;
            if (g == x->ngroups)
                break;
        }
        plan->searched += search_pipelines(x, conf, tables, (const struct dahlsim_node_group(*)[1 + DAHLSIM_MAX_PSTATES])groups,
                                           &desc, shapes, best, &nbest, err, err_size);
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
        struct table own[PARTS];
        for (long g = 0; g < x->ngroups; g++)
            own[g] = tables[g][0];
        bool has_equal = equal_split(x, &eq) && predict(x, own, grad, &eq);
        plan->best = calloc((size_t)nbest + 1, sizeof(*plan->best));
        if (plan->best == NULL) {
            ret = -ENOMEM;
        } else {
            for (int i = 0; i < nbest; i++)
                to_candidate(groups, &best[i], false, &plan->best[plan->nbest++]);
            if (has_equal)
                to_candidate(groups, &eq, true, &plan->best[plan->nbest++]);
        }
    }
    if (ret == -ENOMEM)
        snprintf(err, err_size, "out of memory");
    for (int g = 0; tables != NULL && g < PARTS; g++)
        for (int v = 0; v < 1 + DAHLSIM_MAX_PSTATES; v++) {
            free(tables[g][v].t);
            free(tables[g][v].dyn_j);
            free(tables[g][v].alone_t);
            free(tables[g][v].alone_dyn_j);
            free(tables[g][v].frac);
        }
    free(tables);
    free(groups);
    free(best);
    return ret;
}

void dahlsim_plan_fini(struct dahlsim_plan *plan)
{
    free(plan->best);
    *plan = (struct dahlsim_plan){0};
}
