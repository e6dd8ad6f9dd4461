/* Fidelity as decisions (`dahlsim validate`): which pairs of setups stand for a choice a user makes (a
 * policy, a batch size, a worker count), a pair's native ratio over runs made back to back, whether the
 * simulation orders a pair as the native runs do, and Kendall's tau-b over the comparable pairs. Arithmetic
 * over the caller's arrays: no file, no StarPU. */
#ifndef DAHLSIM_PAIRS_H
#define DAHLSIM_PAIRS_H

#include <stdbool.h>
#include <stddef.h>

/* Native medians further apart than this make a pair distinct: its order is the native runs' finding, not
 * their noise. */
#define DAHLSIM_PAIR_DISTINCT 0.05

/* What comparing two setups chooses between. */
enum dahlsim_pair_kind {
    DAHLSIM_PAIR_NONE = 0,      /* no choice a user makes: not compared */
    DAHLSIM_PAIR_POLICY,        /* same dataset and batch: scheduler, workers, pipeline depth or grain */
    DAHLSIM_PAIR_BATCH_WORKERS, /* same dataset and scheduler: batch or workers */
};

/* A setup as the comparability rule reads it; the strings are the caller's. */
struct dahlsim_pair_setup {
    const char *dataset, *sched;
    long samples, batch, ncpu, ngpu, nodes, depth, grain;
};

/* Two setups a < b compared, and what the comparison found. */
struct dahlsim_pair {
    size_t a, b; /* the setups' indices */
    enum dahlsim_pair_kind kind;
    double native_ratio;    /* a over b natively: dahlsim_pair_native_ratio */
    double simulated_ratio; /* sim[a] / sim[b] */
    double error;           /* simulated_ratio / native_ratio - 1 */
    bool distinct;          /* the native medians more than DAHLSIM_PAIR_DISTINCT apart */
    bool ordered;           /* the simulation orders a and b as the native medians do */
};

/* The figures over a set of pairs. */
struct dahlsim_pairs_summary {
    size_t pairs, distinct, ordered; /* ordered: among the distinct ones */
    double median_abs_error, max_abs_error; /* NAN without a pair */
    double tau_b;                           /* NAN where undefined (dahlsim_pairs_tau_b) */
};

/* The kind of pair a, b. Never comparable across nodes or GPUs. POLICY: same dataset and batch, differing in
 * anything else (scheduler, CPU workers, pipeline depth, grain, samples); otherwise BATCH_WORKERS: same
 * dataset and scheduler, differing in batch or CPU workers; otherwise NONE (identical setups included). */
enum dahlsim_pair_kind dahlsim_pair_kind(const struct dahlsim_pair_setup *a, const struct dahlsim_pair_setup *b);

/* "policy" or "batch-workers" (NULL for NONE), as fidelity.json writes them. */
const char *dahlsim_pair_kind_name(enum dahlsim_pair_kind kind);

/* The median over the rounds where neither run is noisy (over all rounds where there is no such round) of
 * ta[r] / tb[r]: runs of one round are made back to back, so a slow spell of the machine lands on both.
 * noisy_a, noisy_b may be NULL (no run noisy). NAN when rounds is 0. */
double dahlsim_pair_native_ratio(const double *ta, const bool *noisy_a, const double *tb, const bool *noisy_b,
                                 size_t rounds);

/* Pair a, b (a < b) of kind, with its native ratio, judged against the native medians med[] and the simulated
 * makespans sim[] of the setups. */
struct dahlsim_pair dahlsim_pair_judge(size_t a, size_t b, enum dahlsim_pair_kind kind, double native_ratio,
                                       const double *med, const double *sim);

/* Kendall's tau-b of x against y restricted to the given pairs (not every pair of indices): with C and D the
 * pairs whose x and y differences have the same and opposite signs, T_x and T_y those tied in x and in y,
 * (C - D) / sqrt((P - T_x) (P - T_y)) over the P pairs. Over every pair of indices this is the textbook
 * tau-b. NAN without a pair, or where every pair is tied in x or in y. */
double dahlsim_pairs_tau_b(const struct dahlsim_pair *p, size_t npairs, const double *x, const double *y);

/* The summary of npairs judged pairs; med[] and sim[] as given to dahlsim_pair_judge (tau-b of the native
 * medians against the simulated makespans). */
struct dahlsim_pairs_summary dahlsim_pairs_summarize(const struct dahlsim_pair *p, size_t npairs, const double *med,
                                                     const double *sim);

#endif /* DAHLSIM_PAIRS_H */
