/* Fidelity as decisions (dahlsim_pairs.h): the comparability rule, a pair's native ratio over back-to-back
 * rounds, its verdicts (distinct, ordered), Kendall's tau-b over the comparable pairs, and their summary. */
#include "dahlsim_pairs.h"

#include "dahlsim_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum dahlsim_pair_kind dahlsim_pair_kind(const struct dahlsim_pair_setup *a, const struct dahlsim_pair_setup *b)
{
    if (a->nodes != b->nodes || a->ngpu != b->ngpu || strcmp(a->dataset, b->dataset) != 0)
        return DAHLSIM_PAIR_NONE;
    bool same_sched = strcmp(a->sched, b->sched) == 0;
    bool same_rest = a->ncpu == b->ncpu && a->depth == b->depth && a->grain == b->grain && a->samples == b->samples;
    if (a->batch == b->batch)
        return same_sched && same_rest ? DAHLSIM_PAIR_NONE : DAHLSIM_PAIR_POLICY;
    return same_sched ? DAHLSIM_PAIR_BATCH_WORKERS : DAHLSIM_PAIR_NONE;
}

const char *dahlsim_pair_kind_name(enum dahlsim_pair_kind kind)
{
    switch (kind) {
    case DAHLSIM_PAIR_POLICY:
        return "policy";
    case DAHLSIM_PAIR_BATCH_WORKERS:
        return "batch-workers";
    case DAHLSIM_PAIR_NONE:
        break;
    }
    return NULL;
}

/* Whether neither run of round r is noisy. */
static bool quiet_round(const bool *noisy_a, const bool *noisy_b, size_t r)
{
    return !(noisy_a != NULL && noisy_a[r]) && !(noisy_b != NULL && noisy_b[r]);
}

double dahlsim_pair_native_ratio(const double *ta, const bool *noisy_a, const double *tb, const bool *noisy_b,
                                 size_t rounds)
{
    double *ratio = rounds > 0 ? malloc(rounds * sizeof(*ratio)) : NULL;
    if (ratio == NULL)
        return NAN;
    size_t quiet = 0, n = 0;
    for (size_t r = 0; r < rounds; r++)
        quiet += quiet_round(noisy_a, noisy_b, r);
    for (size_t r = 0; r < rounds; r++)
        if (quiet == 0 || quiet_round(noisy_a, noisy_b, r))
            ratio[n++] = ta[r] / tb[r];
    double median = dahlsim_median(ratio, n);
    free(ratio);
    return median;
}

/* -1, 0 or 1 as d is negative, zero or positive. */
static int sign(double d)
{
    return (d > 0) - (d < 0);
}

struct dahlsim_pair dahlsim_pair_judge(size_t a, size_t b, enum dahlsim_pair_kind kind, double native_ratio,
                                       const double *med, const double *sim)
{
    struct dahlsim_pair p = {.a = a, .b = b, .kind = kind, .native_ratio = native_ratio};
    p.simulated_ratio = sim[a] / sim[b];
    p.error = p.simulated_ratio / native_ratio - 1;
    p.distinct = fabs(med[a] / med[b] - 1) > DAHLSIM_PAIR_DISTINCT;
    p.ordered = sign(sim[a] - sim[b]) == sign(med[a] - med[b]);
    return p;
}

double dahlsim_pairs_tau_b(const struct dahlsim_pair *p, size_t npairs, const double *x, const double *y)
{
    long concordant = 0, discordant = 0, tied_x = 0, tied_y = 0;
    for (size_t k = 0; k < npairs; k++) {
        int sx = sign(x[p[k].a] - x[p[k].b]), sy = sign(y[p[k].a] - y[p[k].b]);
        tied_x += sx == 0;
        tied_y += sy == 0;
        concordant += sx * sy > 0;
        discordant += sx * sy < 0;
    }
    double denominator = sqrt((double)((long)npairs - tied_x) * (double)((long)npairs - tied_y));
    return denominator > 0 ? (double)(concordant - discordant) / denominator : NAN;
}

struct dahlsim_pairs_summary dahlsim_pairs_summarize(const struct dahlsim_pair *p, size_t npairs, const double *med,
                                                     const double *sim)
{
    struct dahlsim_pairs_summary s = {.pairs = npairs, .median_abs_error = NAN, .max_abs_error = NAN};
    double *errs = npairs > 0 ? malloc(npairs * sizeof(*errs)) : NULL;
    for (size_t k = 0; k < npairs; k++) {
        s.distinct += p[k].distinct;
        s.ordered += p[k].distinct && p[k].ordered;
        if (errs != NULL)
            errs[k] = fabs(p[k].error);
    }
    if (errs != NULL) {
        s.median_abs_error = dahlsim_median(errs, npairs); /* sorts errs: the last is the largest */
        s.max_abs_error = errs[npairs - 1];
    }
    free(errs);
    s.tau_b = dahlsim_pairs_tau_b(p, npairs, med, sim);
    return s;
}
