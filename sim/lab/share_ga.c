/* The genetic search over job-step orders of the GPU-sharing emulator (see dahlsim_share.h): the study's
 * population, selection, order crossover and move mutation, with the lab's seeded splitmix64 draws, each
 * order scored by one emulation reusing one emulator state. */
#include "dahlsim_lab_internal.h"
#include "share_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dahlsim_share_ga_defaults(struct dahlsim_share_ga_conf *ga)
{
    *ga = (struct dahlsim_share_ga_conf){.population = 32, .select = 8, .generations = 50, .patience = 10,
                                         .mutation = 0.2, .seed = 1};
}

static int ga_check(const struct dahlsim_share_ga_conf *ga, char *err, size_t err_size)
{
    if (ga->population < 2 || ga->population > 100000) {
        snprintf(err, err_size, "GA population: expected 2 to 100000 orders, got %d", ga->population);
        return -EINVAL;
    }
    if (ga->select < 1 || ga->select > ga->population) {
        snprintf(err, err_size, "GA selection: expected 1 to the population (%d) orders kept, got %d", ga->population,
                 ga->select);
        return -EINVAL;
    }
    if (ga->generations < 1 || ga->patience < 1 || !(ga->mutation >= 0.0 && ga->mutation <= 1.0)) {
        snprintf(err, err_size, "GA: expected generations >= 1, patience >= 1 and a mutation rate in [0, 1], got %d, "
                                "%d and %g", ga->generations, ga->patience, ga->mutation);
        return -EINVAL;
    }
    return 0;
}

/* The child of p1 and p2 (n elements): p2[0 .. cut), then p1's job-steps not in that prefix, in p1's order. */
static void crossover(const int *p1, const int *p2, int n, int cut, int *child)
{
    int taken[DAHLSIM_SHARE_MAX_JOBS] = {0}, seen[DAHLSIM_SHARE_MAX_JOBS] = {0};
    memcpy(child, p2, (size_t)cut * sizeof(int));
    for (int p = 0; p < cut; p++)
        taken[p2[p]]++;
    int len = cut;
    for (int p = 0; p < n; p++)
        if (seen[p1[p]]++ >= taken[p1[p]])
            child[len++] = p1[p];
}

/* Moves one element of v to a random position. */
static void mutate(int *v, int n, uint64_t *rng)
{
    int from = (int)rng_below(rng, (uint64_t)n), to = (int)rng_below(rng, (uint64_t)n), x = v[from];
    if (to < from)
        memmove(v + to + 1, v + to, (size_t)(from - to) * sizeof(int));
    else
        memmove(v + from, v + from + 1, (size_t)(to - from) * sizeof(int));
    v[to] = x;
}

struct ga_state {
    struct share_emu e;
    int n, size;                /* order length, population */
    int *pop, *next, *rank;
    double *fit, *next_fit;
    struct dahlsim_share_result scratch;
    long evaluations;
};

static double evaluate(struct ga_state *g, const struct dahlsim_share_conf *conf, const int *order)
{
    share_emu_run(&g->e, conf, DAHLSIM_SHARE_GIVEN, order, &g->scratch);
    g->evaluations++;
    return g->scratch.makespan_s;
}

/* The first orders: fifo, round-robin and weight as realised (under LRU for BELADY), then shuffles of fifo's. */
static void ga_seed(struct ga_state *g, const struct dahlsim_share_conf *conf, uint64_t *rng)
{
    static const enum dahlsim_share_order seeds[] = {DAHLSIM_SHARE_FIFO, DAHLSIM_SHARE_ROUND_ROBIN,
                                                      DAHLSIM_SHARE_WEIGHT};
    struct dahlsim_share_conf realise = *conf;
    if (realise.policy == DAHLSIM_SHARE_BELADY)
        realise.policy = DAHLSIM_SHARE_LRU;
    for (int i = 0; i < g->size; i++) {
        int *v = g->pop + (size_t)i * g->n;
        if (i < 3) {
            share_emu_run(&g->e, &realise, seeds[i], NULL, &g->scratch);
            memcpy(v, g->e.seq, (size_t)g->n * sizeof(int));
        } else {
            memcpy(v, g->pop, (size_t)g->n * sizeof(int));
            for (int a = g->n - 1; a > 0; a--) {
                int b = (int)rng_below(rng, (uint64_t)a + 1), x = v[a];
                v[a] = v[b];
                v[b] = x;
            }
        }
        g->fit[i] = evaluate(g, conf, v);
    }
}

/* rank[0 .. size-1]: the population fastest first, ties in index order. */
static void ga_rank(struct ga_state *g)
{
    for (int i = 0; i < g->size; i++) {
        int b = i;
        for (; b > 0 && g->fit[i] < g->fit[g->rank[b - 1]]; b--)
            g->rank[b] = g->rank[b - 1];
        g->rank[b] = i;
    }
}

/* One generation: the `select` fastest kept in rank order, children after them. Returns the best makespan. */
static double ga_generation(struct ga_state *g, const struct dahlsim_share_conf *conf,
                            const struct dahlsim_share_ga_conf *ga, uint64_t *rng)
{
    size_t n = (size_t)g->n;
    ga_rank(g);
    for (int k = 0; k < ga->select; k++) {
        memcpy(g->next + k * n, g->pop + (size_t)g->rank[k] * n, n * sizeof(int));
        g->next_fit[k] = g->fit[g->rank[k]];
    }
    double best = g->next_fit[0];
    for (int c = ga->select; c < g->size; c++) {
        int a = (int)rng_below(rng, (uint64_t)ga->select), b = a;
        if (ga->select > 1)
            b = (a + 1 + (int)rng_below(rng, (uint64_t)ga->select - 1)) % ga->select;
        int cut = g->n > 1 ? 1 + (int)rng_below(rng, (uint64_t)g->n - 1) : g->n;
        int *child = g->next + (size_t)c * n;
        crossover(g->next + (size_t)a * n, g->next + (size_t)b * n, g->n, cut, child);
        if (g->n > 1 && rng_unit(rng) < ga->mutation)
            mutate(child, g->n, rng);
        g->next_fit[c] = evaluate(g, conf, child);
        if (g->next_fit[c] < best)
            best = g->next_fit[c];
    }
    int *v = g->pop;
    g->pop = g->next;
    g->next = v;
    double *f = g->fit;
    g->fit = g->next_fit;
    g->next_fit = f;
    return best;
}

static void ga_free(struct ga_state *g)
{
    share_emu_fini(&g->e);
    free(g->pop);
    free(g->next);
    free(g->rank);
    free(g->fit);
    free(g->next_fit);
}

int dahlsim_share_ga(const struct dahlsim_share *s, const struct dahlsim_share_conf *conf,
                     const struct dahlsim_share_ga_conf *ga, struct dahlsim_share_result *best,
                     struct dahlsim_share_ga_stats *stats, char *err, size_t err_size)
{
    memset(best, 0, sizeof(*best));
    memset(stats, 0, sizeof(*stats));
    int ret = ga_check(ga, err, err_size);
    if (ret != 0)
        return ret;
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
    /* The fuzz build (docs/reliability.md): the same search on a budget of a few orders. */
    struct dahlsim_share_ga_conf budget = *ga;
    budget.population = budget.population < 4 ? budget.population : 4;
    budget.select = budget.select < budget.population ? budget.select : budget.population;
    budget.generations = budget.generations < 2 ? budget.generations : 2;
    ga = &budget;
#endif
    if (conf->window < 1 || conf->window > SHARE_WINDOW_MAX || conf->policy >= DAHLSIM_SHARE_NPOLICIES) {
        snprintf(err, err_size, "expected a policy and a window in [1, %d]", SHARE_WINDOW_MAX);
        return -EINVAL;
    }
    struct ga_state g = {.size = ga->population};
    if ((ret = share_emu_init(&g.e, s, err, err_size)) != 0)
        return ret;
    g.n = g.e.nsteps;
    size_t cells = (size_t)g.size * (size_t)g.n + 1;
    g.pop = malloc(cells * sizeof(int));
    g.next = malloc(cells * sizeof(int));
    g.rank = malloc((size_t)g.size * sizeof(int));
    g.fit = malloc((size_t)g.size * sizeof(double));
    g.next_fit = malloc((size_t)g.size * sizeof(double));
    best->order = malloc(((size_t)g.n + 1) * sizeof(int));
    if (!g.pop || !g.next || !g.rank || !g.fit || !g.next_fit || !best->order) {
        ga_free(&g);
        dahlsim_share_result_fini(best);
        snprintf(err, err_size, "out of memory");
        return -ENOMEM;
    }
    uint64_t rng = ga->seed;
    ga_seed(&g, conf, &rng);
    ga_rank(&g);
    double best_s = g.fit[g.rank[0]];
    int stale = 0;
    while (stats->generations < ga->generations && stale < ga->patience) {
        double gen_best = ga_generation(&g, conf, ga, &rng);
        stats->generations++;
        stale = gen_best < best_s ? 0 : stale + 1;
        if (gen_best < best_s)
            best_s = gen_best;
    }
    ga_rank(&g);
    stats->evaluations = g.evaluations;
    share_emu_run(&g.e, conf, DAHLSIM_SHARE_GIVEN, g.pop + (size_t)g.rank[0] * g.n, best);
    ga_free(&g);
    return 0;
}
