/* `dahlsim plan` (issue 22): how to split a training step's samples between the nodes of a heterogeneous
 * cluster, for time or for energy. A data partition gives every node of a group the same share of each step;
 * the planner searches shares and node subsets (a group left out trains nothing and is not counted).
 *
 * The prediction, per candidate (emulated and analytic, never simulated; the check simulates):
 *   step_s   = max over the nodes used of T_m(share) + allreduce(N)
 *   T_m(s)   the scheduler lab's step time for s samples on machine m's workers (dahlsim_grain_step_predict:
 *            the real program's step graph, the machine's perf models and runtime costs)
 *   allreduce(N) = 2 ceil(log2 N) (latency + gradient bytes / bandwidth): the binomial tree of
 *            runtime/dahl_mpi.c moves the whole gradient once per level up and once down, on the network's
 *            per-link figures, after the slowest node's backward pass (no overlap counted)
 *   energy_j = sum over the nodes used of idle watts x step_s + (full - idle) watts x the busy seconds the lab
 *            gives its CPU and GPU workers: SimGrid's host energy model (idle plus load x (full - idle)) on the
 *            machines' power figures (spec sheets for `machine synth` machines)
 * The search: for every subset of the groups and every step-time target t (each value a node's T_m takes),
 * each node gets at most the share that finishes within t, filled in order of the least energy per sample;
 * the candidate is kept when the shares reach the batch. A group whose nodes must differ by one sample is
 * split in two groups of the same machine. The objective then ranks them: time (least step_s), energy
 * (least energy_j), or energy under a time bound (least energy_j with step_s <= bound).
 *
 * StarPU-free, front end only. */
#ifndef DAHLSIM_PLAN_H
#define DAHLSIM_PLAN_H

#include "dahlsim_experiment.h"

#include <stdbool.h>
#include <stddef.h>

enum dahlsim_plan_objective { DAHLSIM_PLAN_TIME, DAHLSIM_PLAN_ENERGY };

struct dahlsim_plan_conf {
    enum dahlsim_plan_objective objective;
    double time_bound_s; /* energy: the step time not to exceed; 0: none */
    int top;             /* candidates to keep */
};

struct dahlsim_plan_candidate {
    long ngroups;
    struct dahlsim_node_group groups[DAHLSIM_MAX_NODE_GROUPS]; /* machine, count and share filled */
    long nodes;
    double step_s, compute_s, allreduce_s; /* predicted: compute_s the slowest node's T_m */
    double energy_j;                       /* predicted per step; < 0: a machine has no power figures */
    bool equal;                            /* the equal split over every node, the baseline */
};

struct dahlsim_plan {
    struct dahlsim_plan_candidate *best; /* the conf's top candidates, best first, then the baseline */
    size_t nbest;
    size_t searched;                     /* candidates predicted */
    double grad_bytes;                   /* the gradient one allreduce moves */
};

/* Plans x's node groups (x->ngroups > 0; their shares are ignored) under conf. Returns 0, or a negative errno
 * with the reason in err (no partition reaches the batch, a machine the energy objective needs power figures
 * of, a time bound no candidate meets). */
int dahlsim_plan_make(const struct dahlsim_experiment *x, const struct dahlsim_plan_conf *conf,
                      struct dahlsim_plan *plan, char *err, size_t err_size);
void dahlsim_plan_fini(struct dahlsim_plan *plan);

const char *dahlsim_plan_objective_name(enum dahlsim_plan_objective o);

#endif /* DAHLSIM_PLAN_H */
