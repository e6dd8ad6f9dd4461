/* `dahlsim plan`: how to split a training step's samples between the nodes of a heterogeneous
 * cluster, for time or for energy. A data partition gives every node of a group the same share of each step;
 * the planner searches shares and node subsets (a group left out trains nothing and is not counted).
 *
 * The prediction, per candidate (never the simulation of the candidate itself: --check runs that):
 *   T_m(s)   the step time of one node of machine m training s samples alone: by default StarPU-SimGrid's own
 *            (one-node simulations of the real program, through the multi-node path as the candidates run,
 *            at s = 1, 2, 3, then about 1.5 times more up to the batch, SIM_STEPS steps each, their steady
 *            state's mean (dahlsim_plan_results), linear in between), with the StarPU-MPI progression thread's
 *            turns on the workers' cores charged all run ("mpi_progress_core": "busy": in a multi-node candidate
 *            its receives are pending from each step's start), and for a group of one node, which may run
 *            alone, also without them; with the lab predictor, the scheduler lab's
 *            emulation of the step graph (dahlsim_grain_step_predict: no simulation, less faithful)
 *   step_s   the binomial tree of runtime/dahl_mpi.c on the nodes' times, ranks part after part (the parts
 *            put in the order of their T_m, the shortest first: the root does the most): a rank sends its
 *            partial sum up once it and its children have theirs, a rank's incoming transfers one after the
 *            other on its link, the total comes down with a parent's sends sharing its link (tree_end). Two
 *            trees: the dense layers' gradients (nearly all the bytes), ready at frac_m(s) x T_m(s), the
 *            scheduler lab's emulation of when a step's last dense_backward_weights ends (the convolutions'
 *            backward passes run meanwhile; a rank with children sums theirs with an accumulate task its busy
 *            workers run between at once and at the end of its compute: halfway, DENSE_WAIT, fitted to the
 *            simulation), and the convolutions' at T_m(s). A transfer is a tree's bytes
 *            over the network's per-link bandwidth plus its latency, both scaled by SMPI's default factors
 *            for the message size (transfer_s)
 *   energy_j the nodes' idle watts over step_s, plus each node's joules above idle while it computes (the
 *            one-node simulation's SimGrid host energy less idle watts x T_m; the lab: its workers' busy
 *            seconds x (full - idle) watts), on the machines' power figures (spec sheets for `machine synth`)
 * The search: for every subset of the groups and every step-time target t (each value a node's T_m takes),
 * each node gets at most the share that finishes within t, filled in order of the least energy per sample;
 * the candidate is kept when the shares reach the batch. A group whose nodes must differ by one sample is
 * split in two groups of the same machine. The objective then ranks them: time (least step_s), energy
 * (least energy_j), or energy under a time bound (least energy_j with step_s <= bound).
 *
 * Pipelines and hybrids too, when every group has the same node count R (2 to 4 groups): each order of the
 * groups as stages and each set of cuts giving every stage a layer with weights, each stage's R replicas on
 * batch / R samples in micro-batches of the grain, predicted by GPipe's schedule (search_pipelines).
 *
 * StarPU-free, front end only. */
#ifndef DAHLSIM_PLAN_H
#define DAHLSIM_PLAN_H

#include "dahlsim_experiment.h"

#include <stdbool.h>
#include <stddef.h>

struct cJSON;

enum dahlsim_plan_objective { DAHLSIM_PLAN_TIME, DAHLSIM_PLAN_ENERGY };
enum dahlsim_plan_predictor { DAHLSIM_PLAN_SIM, DAHLSIM_PLAN_LAB };

struct dahlsim_plan_conf {
    enum dahlsim_plan_objective objective;
    double time_bound_s; /* energy: the step time not to exceed; 0: none */
    int top;             /* candidates to keep */
    enum dahlsim_plan_predictor predictor;
    const char *work_dir; /* sim: where the one-node simulations go (work_dir/NAME-sSHARE/) */
};

struct dahlsim_plan_candidate {
    long ngroups;
    struct dahlsim_node_group groups[DAHLSIM_MAX_NODE_GROUPS]; /* machine, count and share filled */
    long nodes;
    double step_s, compute_s, allreduce_s; /* predicted: compute_s the slowest node's T_m */
    double energy_j;                       /* predicted per step; < 0: a machine has no power figures */
    bool equal;                            /* the equal split over every node, the baseline */
    long ncuts;                            /* > 0: a pipeline (replicas 1) or hybrid of ncuts + 1 stages, */
    long cuts[DAHLSIM_MAX_NODE_GROUPS];    /* group k the stage from cuts[k - 1], each of count replicas */
    long replicas;
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

/* A run's step time and energy as the plan counts them, from its results.json (r): the mean of the steady
 * state's steps (all but the first two, when at least DAHLSIM_PLAN_STEADY_MIN remain; else makespan over
 * steps: the first steps of a GPU run under dmda swing by tens of percent), and its joules per step (< 0:
 * none). */
#define DAHLSIM_PLAN_STEADY_MIN 2
void dahlsim_plan_results(const struct cJSON *r, double *step_s, double *energy_j);

const char *dahlsim_plan_objective_name(enum dahlsim_plan_objective o);

#endif /* DAHLSIM_PLAN_H */
