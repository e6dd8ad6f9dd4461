/* AutoHeteroprio's metrics and heuristics (see dahl_autoprio.h), written from the paper's definitions. The
 * extracted text of the paper lost some formulas; where it did, the formula here is the one its prose
 * describes, checked against the hyperparameter names and defaults the paper gives (comments say which). */
#include "dahl_autoprio.h"

#include "dahl_array.h"
#include "dahl_names.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const heuristic_names[DAHL_AUTOPRIO_NHEURISTICS] = {
    [DAHL_AUTOPRIO_PRWS] = "prws",         [DAHL_AUTOPRIO_PURWS] = "purws",
    [DAHL_AUTOPRIO_OFFSET] = "offset",     [DAHL_AUTOPRIO_SOFTPLUS] = "softplus",
    [DAHL_AUTOPRIO_INTERP] = "interpolation", [DAHL_AUTOPRIO_NTC] = "ntc",
};

const char *dahl_autoprio_heuristic_name(enum dahl_autoprio_heuristic h)
{
    return (unsigned)h < DAHL_AUTOPRIO_NHEURISTICS ? heuristic_names[h] : "?";
}

bool dahl_autoprio_heuristic_parse(const char *name, enum dahl_autoprio_heuristic *out)
{
    int h = dahl_names_find(heuristic_names, DAHL_AUTOPRIO_NHEURISTICS, name);
    if (h < 0)
        return false;
    *out = (enum dahl_autoprio_heuristic)h;
    return true;
}

void dahl_autoprio_heuristic_list(char *buf, size_t size)
{
    dahl_names_join(heuristic_names, DAHL_AUTOPRIO_NHEURISTICS, buf, size);
}

struct dahl_autoprio_params dahl_autoprio_params_default(void)
{
    return (struct dahl_autoprio_params){.offset_alpha = 1.3, .offset_beta = 1.0, .ntc_alpha = 0.3, .ntc_beta = 0.5};
}

/* A type's cost on arch, or a negative value when it has none: no implementation there, or no estimate on
 * any architecture. Without an estimate on arch but with one elsewhere, the fastest other estimate stands in
 * (the paper's second "execution time prediction" behaviour). */
static double type_cost(const struct dahl_autoprio_type *t, int arch)
{
    if (!t->runs_on[arch])
        return -1.0;
    if (t->cost[arch] > 0.0)
        return t->cost[arch];
    double best = -1.0;
    for (int a = 0; a < DAHL_NARCH; a++)
        if (t->runs_on[a] && t->cost[a] > 0.0 && (best < 0.0 || t->cost[a] < best))
            best = t->cost[a];
    return best;
}

static double best_cost(const struct dahl_autoprio_type *t)
{
    double best = -1.0;
    for (int a = 0; a < DAHL_NARCH; a++) {
        double c = type_cost(t, a);
        if (c > 0.0 && (best < 0.0 || c < best))
            best = c;
    }
    return best;
}

/* "Cost normalization": z_ij = w_ij / (mean over tasks of min_j w_ij), so that the average task costs 1 on
 * its best architecture. Per type, the mean over tasks is the proportion-weighted mean over types. */
double dahl_autoprio_scale(const struct dahl_autoprio_type *types, int n)
{
    double sum = 0.0, weight = 0.0;
    for (int i = 0; i < n; i++) {
        double b = best_cost(&types[i]);
        if (b > 0.0 && types[i].proportion > 0.0) {
            sum += types[i].proportion * b;
            weight += types[i].proportion;
        }
    }
    return sum > 0.0 && weight > 0.0 ? sum / weight : 1.0;
}

void dahl_autoprio_metrics(const struct dahl_autoprio_type *types, int n, int i, const double idle[DAHL_NARCH],
                           struct dahl_autoprio_metrics *out)
{
    const struct dahl_autoprio_type *t = &types[i];
    double scale = dahl_autoprio_scale(types, n);
    for (int a = 0; a < DAHL_NARCH; a++) {
        double c = type_cost(t, a);
        out->z[a] = c > 0.0 ? c / scale : DAHL_AUTOPRIO_NO_COST;
        out->nrt[a] = t->nrt[a] / scale;
    }
    for (int a = 0; a < DAHL_NARCH; a++) {
        int other = 1 - a;
        /* Absolute difference diff_arch = w^other - w^arch: positive when arch is the faster one. Relative
         * difference rel_diff_arch = w^other / w^arch. */
        out->diff[a] = out->z[other] - out->z[a];
        out->rel_diff[a] = out->z[other] / out->z[a];
    }
    out->nod = t->nod;
    out->succ_best = t->succ_best / scale;
    /* "Useful released time": URT = NRT_CPU IDLE(CPU) + NRT_GPU IDLE(GPU). */
    out->urt = out->nrt[DAHL_ARCH_CPU] * idle[DAHL_ARCH_CPU] + out->nrt[DAHL_ARCH_GPU] * idle[DAHL_ARCH_GPU];
}

/* ln(1 + e^x) without overflow. */
static double softplus(double x)
{
    return x > 30.0 ? x : log1p(exp(x));
}

/* The interpolation model's weight: 0 at URT = 0, rising to 1 at URT >= 1 (sqrt(x) sqrt(2 - x) is the
 * quarter circle through (0, 0) and (1, 1)). */
static double rpg(double x)
{
    if (x >= 1.0)
        return 1.0;
    if (x <= 0.0)
        return 0.0;
    return sqrt(x) * sqrt(2.0 - x);
}

double dahl_autoprio_score(enum dahl_autoprio_heuristic h, const struct dahl_autoprio_params *p,
                           const struct dahl_autoprio_metrics *m, int arch)
{
    double diff = m->diff[arch], own = m->z[arch], urt = m->urt;
    switch (h) {
    case DAHL_AUTOPRIO_PRWS:
        /* PRWS_arch(v) = NOD(v) (sum_{s in succ(v)} w_s^best + diff_arch(v)) / w_v^arch: the released work,
         * favouring the faster architecture, per second spent executing v. */
        return m->nod * (m->succ_best + diff) / own;
    case DAHL_AUTOPRIO_PURWS:
        /* PURWS: PRWS with URT in place of NOD, to balance the work between starving architectures. */
        return urt * (m->succ_best + diff) / own;
    case DAHL_AUTOPRIO_OFFSET:
        /* offset_model_arch(v) = (alpha + URT(v)) (beta + diff_arch(v)), alpha = 1.3, beta = 1. */
        return (p->offset_alpha + urt) * (p->offset_beta + diff);
    case DAHL_AUTOPRIO_SOFTPLUS:
        /* softplus_model_arch(v) = (1 + URT(v)) softplus(diff_arch(v)), softplus(x) = ln(1 + e^x). */
        return (1.0 + urt) * softplus(diff);
    case DAHL_AUTOPRIO_INTERP: {
        /* interpolation_model_arch(v) = rpg(URT) (1 + URT) (1 + diff_arch) + (1 - rpg(URT)) (-ln(1 + e^-diff_arch)).
         * The extracted text lost the signs of the second term; -softplus(-diff) is the increasing form
         * (more negative the slower arch is), as a priority score must be. Note: with rpg(0) = 0 the model
         * is the offset form (alpha = beta = 1) for URT >= 1 and the softplus form at URT = 0 -- the paper's
         * prose says the reverse, its formula says this; the formula is followed. */
        double r = rpg(urt);
        return r * (1.0 + urt) * (1.0 + diff) + (1.0 - r) * (-softplus(-diff));
    }
    case DAHL_AUTOPRIO_NTC: {
        /* NTC_arch(v) = diff_arch(v) + alpha exp(-beta (rd - 1)^2) NOD(v), rd = max(rel_diff, 1 / rel_diff),
         * alpha = 0.3, beta = 0.5: NOD matters only while the architectures cost about the same. */
        double rd = m->rel_diff[arch];
        if (rd < 1.0)
            rd = 1.0 / rd;
        return diff + p->ntc_alpha * exp(-p->ntc_beta * (rd - 1.0) * (rd - 1.0)) * m->nod;
    }
    default:
        return 0.0;
    }
}

struct scored {
    int index;
    double score;
};

static int scored_cmp(const void *a, const void *b)
{
    const struct scored *x = a, *y = b;
    if (x->score != y->score)
        return x->score > y->score ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

int dahl_autoprio_order(enum dahl_autoprio_heuristic h, const struct dahl_autoprio_params *p,
                        const struct dahl_autoprio_type *types, int n, const double idle[DAHL_NARCH], int arch,
                        int *order)
{
    struct scored *s = malloc((size_t)(n > 0 ? n : 1) * sizeof(*s));
    if (s == NULL)
        return 0;
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (!types[i].runs_on[arch])
            continue;
        struct dahl_autoprio_metrics m;
        dahl_autoprio_metrics(types, n, i, idle, &m);
        double score = dahl_autoprio_score(h, p, &m, arch);
        /* A NaN would make the order depend on qsort's internals. */
        s[k++] = (struct scored){.index = i, .score = isnan(score) ? -INFINITY : score};
    }
    qsort(s, (size_t)k, sizeof(*s), scored_cmp);
    for (int i = 0; i < k; i++)
        order[i] = s[i].index;
    free(s);
    return k;
}

/* ---- the online tracker ---- */

struct tracked {
    bool runs_on[DAHL_NARCH];
    double estimate[DAHL_NARCH]; /* perf-model estimate; <= 0 for none */
    double time_sum[DAHL_NARCH]; /* measured execution times */
    long time_n[DAHL_NARCH];
    long pushed;                 /* tasks pushed: the type's proportion, and the count of the means below */
    double nod_sum, succ_best_sum, nrt_sum[DAHL_NARCH];
};

struct dahl_autoprio {
    enum dahl_autoprio_heuristic heuristic;
    struct dahl_autoprio_params params;
    int interval;
    long pushes;
    double idle[DAHL_NARCH];
    struct tracked *types;
    int n;
    size_t cap;
};

struct dahl_autoprio *dahl_autoprio_create(enum dahl_autoprio_heuristic h, const struct dahl_autoprio_params *p,
                                           int interval)
{
    struct dahl_autoprio *ap = calloc(1, sizeof(*ap));
    if (ap == NULL)
        return NULL;
    ap->heuristic = h;
    ap->params = p != NULL ? *p : dahl_autoprio_params_default();
    ap->interval = interval > 0 ? interval : 1;
    /* Before anything ran, every worker is idle. */
    ap->idle[DAHL_ARCH_CPU] = ap->idle[DAHL_ARCH_GPU] = 1.0;
    return ap;
}

void dahl_autoprio_destroy(struct dahl_autoprio *ap)
{
    if (ap == NULL)
        return;
    free(ap->types);
    free(ap);
}

int dahl_autoprio_declare(struct dahl_autoprio *ap, int t, const bool runs_on[DAHL_NARCH],
                          const double cost[DAHL_NARCH])
{
    if (t < 0 || t > ap->n)
        return -1;
    if (t == ap->n) {
        struct tracked *grown = dahl_array_grow(ap->types, &ap->cap, (size_t)ap->n + 1, sizeof(*grown));
        if (grown == NULL)
            return -1;
        ap->types = grown;
        ap->types[ap->n++] = (struct tracked){0};
    }
    for (int a = 0; a < DAHL_NARCH; a++) {
        ap->types[t].runs_on[a] = runs_on[a];
        ap->types[t].estimate[a] = cost[a];
    }
    return t;
}

int dahl_autoprio_ntypes(const struct dahl_autoprio *ap)
{
    return ap->n;
}

/* The current cost estimate: the mean measured time ("the average effective execution time of previous
 * tasks of the corresponding type"), else the perf model's estimate, else none (<= 0). */
static double tracked_cost(const struct tracked *t, int a)
{
    if (!t->runs_on[a])
        return -1.0;
    if (t->time_n[a] > 0)
        return t->time_sum[a] / (double)t->time_n[a];
    return t->estimate[a];
}

/* Pexec(s, arch): the share of the type's tasks that ran on arch so far. Before any ran, the type is
 * assumed to run on its faster architecture. */
static double tracked_pexec(const struct tracked *t, int a)
{
    long n = t->time_n[DAHL_ARCH_CPU] + t->time_n[DAHL_ARCH_GPU];
    if (n > 0)
        return (double)t->time_n[a] / (double)n;
    double c = tracked_cost(t, a), o = tracked_cost(t, 1 - a);
    if (c <= 0.0)
        return 0.0;
    return o <= 0.0 || c < o || (c == o && a == DAHL_ARCH_CPU) ? 1.0 : 0.0;
}

void dahl_autoprio_type_get(const struct dahl_autoprio *ap, int t, struct dahl_autoprio_type *out)
{
    const struct tracked *x = &ap->types[t];
    double n = x->pushed > 0 ? (double)x->pushed : 1.0;
    *out = (struct dahl_autoprio_type){.proportion = (double)x->pushed, .nod = x->nod_sum / n,
                                       .succ_best = x->succ_best_sum / n};
    for (int a = 0; a < DAHL_NARCH; a++) {
        out->runs_on[a] = x->runs_on[a];
        out->cost[a] = tracked_cost(x, a);
        out->nrt[a] = x->nrt_sum[a] / n;
    }
}

bool dahl_autoprio_push(struct dahl_autoprio *ap, int t, int nsucc, const int *succ_type, const double *succ_indeg)
{
    struct tracked *x = &ap->types[t];
    double nod = 0.0, succ_best = 0.0, nrt[DAHL_NARCH] = {0.0, 0.0};
    for (int k = 0; k < nsucc; k++) {
        const struct tracked *s = &ap->types[succ_type[k]];
        double id = succ_indeg[k] >= 1.0 ? succ_indeg[k] : 1.0;
        nod += 1.0 / id;
        double best = -1.0;
        for (int a = 0; a < DAHL_NARCH; a++) {
            double c = tracked_cost(s, a);
            if (c <= 0.0)
                continue;
            if (best < 0.0 || c < best)
                best = c;
            nrt[a] += tracked_pexec(s, a) * c / id;
        }
        succ_best += best > 0.0 ? best : 0.0;
    }
    bool first = x->pushed == 0;
    x->pushed++;
    x->nod_sum += nod;
    x->succ_best_sum += succ_best;
    for (int a = 0; a < DAHL_NARCH; a++)
        x->nrt_sum[a] += nrt[a];
    /* "the priorities are updated the first time a task is pushed (the first time the scheduler discovers
     * a new type of task), and then every nth pushed task". */
    bool due = first || ap->pushes % ap->interval == 0;
    ap->pushes++;
    return due;
}

void dahl_autoprio_executed(struct dahl_autoprio *ap, int t, int arch, double duration)
{
    ap->types[t].time_sum[arch] += duration;
    ap->types[t].time_n[arch]++;
}

void dahl_autoprio_set_idle(struct dahl_autoprio *ap, const double idle[DAHL_NARCH])
{
    for (int a = 0; a < DAHL_NARCH; a++)
        ap->idle[a] = idle[a] < 0.0 ? 0.0 : idle[a] > 1.0 ? 1.0 : idle[a];
}

void dahl_autoprio_lists(const struct dahl_autoprio *ap, int *order[DAHL_NARCH], int nprio[DAHL_NARCH])
{
    struct dahl_autoprio_type *types = malloc((size_t)(ap->n > 0 ? ap->n : 1) * sizeof(*types));
    if (types == NULL) {
        nprio[0] = nprio[1] = 0;
        return;
    }
    for (int t = 0; t < ap->n; t++)
        dahl_autoprio_type_get(ap, t, &types[t]);
    for (int a = 0; a < DAHL_NARCH; a++)
        nprio[a] = dahl_autoprio_order(ap->heuristic, &ap->params, types, ap->n, ap->idle, a, order[a]);
    free(types);
}
