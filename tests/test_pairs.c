/* validate's fidelity as decisions (sim/core/dahlsim_pairs.h), in-process, on hand-computed inputs: which
 * setups make a pair, a pair's native ratio over the quiet rounds, the distinct and ordered verdicts and their
 * counts, Kendall's tau-b (ties included) over all pairs and over some. */
#include <criterion/criterion.h>

#include "dahlsim_pairs.h"

#include <math.h>
#include <stddef.h>

#define EPS 1e-12

/* 28x28x3, batch 32, lws, 2 CPU workers, one node, no GPU: what the cases below vary. */
static struct dahlsim_pair_setup base(void)
{
    return (struct dahlsim_pair_setup){.dataset = "synthetic:28x28x3", .sched = "lws", .samples = 8192,
                                       .batch = 32, .ncpu = 2, .ngpu = 0, .nodes = 0, .depth = 1, .grain = 1};
}

Test(pairs, same_dataset_and_batch_is_a_policy_choice)
{
    struct dahlsim_pair_setup a = base(), b = base();
    b.sched = "dmda";
    cr_assert_eq(dahlsim_pair_kind(&a, &b), DAHLSIM_PAIR_POLICY);
    b = base();
    b.ncpu = 1; /* workers alone, at the same batch and scheduler: the first rule's */
    cr_assert_eq(dahlsim_pair_kind(&a, &b), DAHLSIM_PAIR_POLICY);
    b = base();
    b.depth = 2;
    cr_assert_eq(dahlsim_pair_kind(&a, &b), DAHLSIM_PAIR_POLICY);
    b = base();
    b.grain = 4;
    b.sched = "eager";
    cr_assert_eq(dahlsim_pair_kind(&b, &a), DAHLSIM_PAIR_POLICY);
    cr_assert_str_eq(dahlsim_pair_kind_name(DAHLSIM_PAIR_POLICY), "policy");
}

Test(pairs, same_dataset_and_scheduler_is_a_batch_or_worker_choice)
{
    struct dahlsim_pair_setup a = base(), b = base();
    b.batch = 4;
    cr_assert_eq(dahlsim_pair_kind(&a, &b), DAHLSIM_PAIR_BATCH_WORKERS);
    b.ncpu = 1;
    b.samples = 4096;
    cr_assert_eq(dahlsim_pair_kind(&a, &b), DAHLSIM_PAIR_BATCH_WORKERS);
    cr_assert_str_eq(dahlsim_pair_kind_name(DAHLSIM_PAIR_BATCH_WORKERS), "batch-workers");
}

Test(pairs, other_setups_are_not_compared)
{
    struct dahlsim_pair_setup a = base(), b = base();
    cr_assert_eq(dahlsim_pair_kind(&a, &b), DAHLSIM_PAIR_NONE, "identical setups");
    b.dataset = "synthetic:28x28x1";
    b.sched = "dmda";
    cr_assert_eq(dahlsim_pair_kind(&a, &b), DAHLSIM_PAIR_NONE, "another dataset");
    b = base();
    b.batch = 16;
    b.sched = "dmda";
    cr_assert_eq(dahlsim_pair_kind(&a, &b), DAHLSIM_PAIR_NONE, "batch and scheduler both differ");
    b = base();
    b.sched = "dmda";
    b.ngpu = 1;
    cr_assert_eq(dahlsim_pair_kind(&a, &b), DAHLSIM_PAIR_NONE, "another GPU count");
    b = base();
    b.batch = 16;
    b.nodes = 2;
    cr_assert_eq(dahlsim_pair_kind(&a, &b), DAHLSIM_PAIR_NONE, "another node count");
    cr_assert_null(dahlsim_pair_kind_name(DAHLSIM_PAIR_NONE));
}

/* Ratios per round 2, 10, 1.5, 2.5: the median of the quiet rounds' only. */
Test(pairs, native_ratio_is_the_median_over_rounds_where_neither_run_is_noisy)
{
    const double ta[] = {2, 10, 3, 5}, tb[] = {1, 1, 2, 2};
    const bool quiet[] = {false, false, false, false}, a_noisy[] = {false, true, false, false},
               b_noisy[] = {false, false, false, true}, all[] = {true, true, true, true};
    cr_assert_float_eq(dahlsim_pair_native_ratio(ta, NULL, tb, NULL, 4), 2.25, EPS, "every round: (2 + 2.5) / 2");
    cr_assert_float_eq(dahlsim_pair_native_ratio(ta, quiet, tb, quiet, 4), 2.25, EPS);
    cr_assert_float_eq(dahlsim_pair_native_ratio(ta, a_noisy, tb, quiet, 4), 2, EPS, "rounds 0, 2, 3: 2, 1.5, 2.5");
    cr_assert_float_eq(dahlsim_pair_native_ratio(ta, a_noisy, tb, b_noisy, 4), 1.75, EPS, "rounds 0 and 2");
    cr_assert_float_eq(dahlsim_pair_native_ratio(ta, quiet, tb, all, 4), 2.25, EPS, "no quiet round: all of them");
    cr_assert_float_eq(dahlsim_pair_native_ratio(ta, a_noisy, tb, NULL, 1), 2, EPS, "one round");
    cr_assert(isnan(dahlsim_pair_native_ratio(ta, NULL, tb, NULL, 0)));
}

/* Three setups: native medians 1, 1.2, 1.04; simulated 1.1, 1.3, 1.35. (0, 1) and (1, 2) are more than 5 %
 * apart natively, (0, 2) is not; the simulation orders (0, 1) and (0, 2) as natively, not (1, 2). */
static const double med[] = {1, 1.2, 1.04}, sim[] = {1.1, 1.3, 1.35};

Test(pairs, a_pair_is_judged_against_the_medians_and_the_simulations)
{
    struct dahlsim_pair p = dahlsim_pair_judge(0, 1, DAHLSIM_PAIR_POLICY, 0.8, med, sim);
    cr_assert_eq(p.a, 0);
    cr_assert_eq(p.b, 1);
    cr_assert_eq(p.kind, DAHLSIM_PAIR_POLICY);
    cr_assert_float_eq(p.native_ratio, 0.8, EPS);
    cr_assert_float_eq(p.simulated_ratio, 1.1 / 1.3, EPS);
    cr_assert_float_eq(p.error, 1.1 / 1.3 / 0.8 - 1, EPS);
    cr_assert(p.distinct, "|1 / 1.2 - 1| = 0.167");
    cr_assert(p.ordered);
    p = dahlsim_pair_judge(0, 2, DAHLSIM_PAIR_POLICY, 1, med, sim);
    cr_assert_not(p.distinct, "|1 / 1.04 - 1| = 0.038");
    cr_assert(p.ordered);
    p = dahlsim_pair_judge(1, 2, DAHLSIM_PAIR_BATCH_WORKERS, 1, med, sim);
    cr_assert(p.distinct, "|1.2 / 1.04 - 1| = 0.154");
    cr_assert_not(p.ordered, "natively 1 is slower than 2, simulated faster");
    const double same[] = {1, 1, 1.2};
    p = dahlsim_pair_judge(0, 1, DAHLSIM_PAIR_POLICY, 1, same, sim);
    cr_assert_not(p.ordered, "tied natively, apart simulated");
    p = dahlsim_pair_judge(0, 1, DAHLSIM_PAIR_POLICY, 1, same, same);
    cr_assert(p.ordered, "tied on both sides");
}

/* The three pairs above with paired errors +10 %, -20 % and +5 % (native ratios made to give them). */
Test(pairs, the_summary_counts_distinct_pairs_ordered_and_the_errors)
{
    const double errors[] = {0.1, -0.2, 0.05};
    const size_t ab[][2] = {{0, 1}, {0, 2}, {1, 2}};
    struct dahlsim_pair p[3];
    for (int k = 0; k < 3; k++) {
        size_t a = ab[k][0], b = ab[k][1];
        p[k] = dahlsim_pair_judge(a, b, DAHLSIM_PAIR_POLICY, sim[a] / sim[b] / (1 + errors[k]), med, sim);
        cr_assert_float_eq(p[k].error, errors[k], EPS);
    }
    struct dahlsim_pairs_summary s = dahlsim_pairs_summarize(p, 3, med, sim);
    cr_assert_eq(s.pairs, 3);
    cr_assert_eq(s.distinct, 2);
    cr_assert_eq(s.ordered, 1, "(0, 1) ordered; (0, 2) ordered but not distinct; (1, 2) not ordered");
    cr_assert_float_eq(s.median_abs_error, 0.1, EPS);
    cr_assert_float_eq(s.max_abs_error, 0.2, EPS);
    cr_assert_float_eq(s.tau_b, 1.0 / 3, EPS, "concordant 2, discordant 1, no tie: 1 / 3");
    s = dahlsim_pairs_summarize(p, 0, med, sim);
    cr_assert_eq(s.pairs, 0);
    cr_assert_eq(s.distinct, 0);
    cr_assert_eq(s.ordered, 0);
    cr_assert(isnan(s.median_abs_error) && isnan(s.max_abs_error) && isnan(s.tau_b));
}

/* Every pair i < j of n indices into p; returns how many. */
static size_t all_pairs(size_t n, struct dahlsim_pair *p)
{
    size_t np = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            p[np++] = (struct dahlsim_pair){.a = i, .b = j};
    return np;
}

/* x = 12 2 1 12 2, y = 1 4 7 1 0 (scipy.stats.kendalltau's example). Over the 10 pairs: concordant (0, 4) and
 * (3, 4); tied in x (0, 3) and (1, 4), in y (0, 3); the other 6 discordant. tau-b = (2 - 6) / sqrt(8 x 9). */
Test(pairs, tau_b_with_ties_over_every_pair)
{
    const double x[] = {12, 2, 1, 12, 2}, y[] = {1, 4, 7, 1, 0};
    struct dahlsim_pair p[10];
    size_t np = all_pairs(5, p);
    cr_assert_eq(np, 10);
    cr_assert_float_eq(dahlsim_pairs_tau_b(p, np, x, y), -4 / sqrt(72), EPS);
    cr_assert_float_eq(dahlsim_pairs_tau_b(p, np, x, y), -0.47140452079103173, EPS);
    cr_assert_float_eq(dahlsim_pairs_tau_b(p, np, x, x), 1, EPS, "a ranking against itself, ties and all");
    const double up[] = {1, 2, 3, 4, 5}, down[] = {5, 4, 3, 2, 1};
    cr_assert_float_eq(dahlsim_pairs_tau_b(p, np, up, down), -1, EPS);
}

/* The same x and y over 4 of the pairs: (0, 1) discordant, (0, 4) and (3, 4) concordant, (0, 3) tied on both
 * sides: (2 - 1) / sqrt((4 - 1) (4 - 1)). */
Test(pairs, tau_b_over_some_pairs_only)
{
    const double x[] = {12, 2, 1, 12, 2}, y[] = {1, 4, 7, 1, 0};
    const struct dahlsim_pair p[] = {{.a = 0, .b = 1}, {.a = 0, .b = 4}, {.a = 3, .b = 4}, {.a = 0, .b = 3}};
    cr_assert_float_eq(dahlsim_pairs_tau_b(p, 4, x, y), 1.0 / 3, EPS);
    cr_assert_float_eq(dahlsim_pairs_tau_b(p, 3, x, y), 1.0 / 3, EPS, "without the tie: (2 - 1) / 3");
}

Test(pairs, tau_b_is_undefined_without_an_untied_pair)
{
    const double x[] = {12, 2, 1, 12, 2}, y[] = {1, 4, 7, 1, 0};
    const struct dahlsim_pair tied[] = {{.a = 0, .b = 3}, {.a = 1, .b = 4}};
    cr_assert(isnan(dahlsim_pairs_tau_b(tied, 2, x, y)), "every pair tied in x");
    cr_assert(isnan(dahlsim_pairs_tau_b(tied, 0, x, y)), "no pair");
}
