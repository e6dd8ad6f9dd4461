/* The control priorities (see dahlsim_dag.h): the AutoHeteroprio paper's search over priority lists,
 * architecture by architecture, every permutation up to 8 types and insertion moves beyond. */
#include "dahlsim_dag.h"
#include "dahlsim_lab_internal.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static void shuffle(int *v, int n, uint64_t *state)
{
    for (int i = n - 1; i > 0; i--) {
        int j = (int)rng_below(state, (uint64_t)i + 1);
        int x = v[i];
        v[i] = v[j];
        v[j] = x;
    }
}

/* Next lexicographic permutation of v; false after the last one. */
static bool next_permutation(int *v, int n)
{
    int i = n - 2;
    while (i >= 0 && v[i] >= v[i + 1])
        i--;
    if (i < 0)
        return false;
    int j = n - 1;
    while (v[j] <= v[i])
        j--;
    int x = v[i];
    v[i] = v[j];
    v[j] = x;
    for (int a = i + 1, b = n - 1; a < b; a++, b--) {
        x = v[a];
        v[a] = v[b];
        v[b] = x;
    }
    return true;
}

/* One round of the control search on arch a for more than 8 types: each type in turn (in the list's order at
 * the start of the round) is moved to the position where the makespan is least, if that is less than the
 * current one. best and *best_s (its makespan) are updated in place; *out gets the round's makespan. */
static int insertion_round(const struct dahlsim_dag *g, const struct dahlsim_emu_conf *c, struct dahlsim_prio *best,
                           int a, double best_s, double *out, char *err, size_t err_size)
{
    int n = best->n[a], start[DAHLSIM_DAG_MAX_TYPES];
    memcpy(start, best->order[a], (size_t)n * sizeof(int));
    for (int k = 0; k < n; k++) {
        int ty = start[k], from = 0;
        while (best->order[a][from] != ty)
            from++;
        int pos = from;
        for (int to = 0; to < n; to++) {
            if (to == from)
                continue;
            struct dahlsim_prio trial = *best;
            int *v = trial.order[a];
            /* move v[from] to index to */
            if (to < from)
                memmove(v + to + 1, v + to, (size_t)(from - to) * sizeof(int));
            else
                memmove(v + from, v + from + 1, (size_t)(to - from) * sizeof(int));
            v[to] = ty;
            struct dahlsim_emu_result r;
            int ret = dahlsim_dag_emulate(g, c, &trial, &r, err, err_size);
            if (ret != 0)
                return ret;
            if (r.makespan_s < best_s) {
                best_s = r.makespan_s;
                pos = to;
            }
        }
        if (pos != from) {
            int *v = best->order[a];
            if (pos < from)
                memmove(v + pos + 1, v + pos, (size_t)(from - pos) * sizeof(int));
            else
                memmove(v + from, v + from + 1, (size_t)(pos - from) * sizeof(int));
            v[pos] = ty;
        }
    }
    *out = best_s;
    return 0;
}

int dahlsim_dag_control(const struct dahlsim_dag *g, const struct dahlsim_emu_conf *conf, uint64_t seed,
                        int max_rounds, struct dahlsim_prio *best, double *makespan_s, char *err,
                        size_t err_size)
{
    struct dahlsim_emu_conf c = *conf;
    c.autoprio = false;
    uint64_t state = seed;
    int count[DAHL_NARCH] = {conf->cpus, conf->gpus};
    memset(best, 0, sizeof(*best));
    for (int a = 0; a < DAHL_NARCH; a++) {
        if (count[a] == 0)
            continue;
        for (int i = 0; i < g->ntypes; i++)
            if (g->cost[i][a] > 0.0)
                best->order[a][best->n[a]++] = i;
        shuffle(best->order[a], best->n[a], &state);
    }
    struct dahlsim_emu_result r;
    int ret = dahlsim_dag_emulate(g, &c, best, &r, err, err_size);
    if (ret != 0)
        return ret;
    double best_s = r.makespan_s;
    int stale = 0;
    for (int round = 0; round < 2 * max_rounds && stale < 2; round++) {
        int a = round % 2;
        if (best->n[a] < 2) {
            stale++;
            continue;
        }
        if (best->n[a] > 8) {
            double round_best;
            ret = insertion_round(g, &c, best, a, best_s, &round_best, err, err_size);
            if (ret != 0)
                return ret;
            stale = round_best < best_s ? 0 : stale + 1;
            best_s = round_best;
            continue;
        }
        struct dahlsim_prio trial = *best;
        int *v = trial.order[a];
        qsort(v, (size_t)trial.n[a], sizeof(int), cmp_int);
        double round_best = INFINITY;
        int ties = 0;
        int chosen[DAHLSIM_DAG_MAX_TYPES];
        do {
            ret = dahlsim_dag_emulate(g, &c, &trial, &r, err, err_size);
            if (ret != 0)
                return ret;
            /* Ties: reservoir sampling picks one of the equally fast lists uniformly. */
            if (r.makespan_s < round_best) {
                round_best = r.makespan_s;
                ties = 1;
                memcpy(chosen, v, (size_t)trial.n[a] * sizeof(int));
            } else if (r.makespan_s == round_best && rng_below(&state, (uint64_t)++ties) == 0) {
                memcpy(chosen, v, (size_t)trial.n[a] * sizeof(int));
            }
        } while (next_permutation(v, trial.n[a]));
        stale = round_best < best_s ? 0 : stale + 1;
        if (round_best <= best_s) {
            memcpy(best->order[a], chosen, (size_t)best->n[a] * sizeof(int));
            best_s = round_best;
        }
    }
    *makespan_s = best_s;
    return 0;
}
